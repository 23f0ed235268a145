// Lesson 3 of the typed-dimensions tutorial: folded dimensions.

// Define a Tensor with a folded dimension K and interleaved layout.
// Layout: K8(4) x I(4) x K(8)

/*@spio
[
Tensor("A", dtype.float, Dims(k8=4, i=4, k=-1))
]
@spio*/
