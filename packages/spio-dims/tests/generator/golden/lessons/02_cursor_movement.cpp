// Lesson 2 of the typed-dimensions tutorial: cursors.

/*@spio
[
Tensor("A", dtype.float, Dims(i=10, j=10))
]
@spio*/
