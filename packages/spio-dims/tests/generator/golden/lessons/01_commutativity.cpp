// Lesson 1 of the typed-dimensions tutorial: the @spio blocks as the lesson writes them.

// Define dimension types I and J.
//
/*@spio
[
Dim("i"), Dim("j")
]
@spio*/

// Define tensors A and B using dimensions I(16) x K(32) and K(32) x J(64).
//
/*@spio
[
Tensor("A", dtype.float, Dims(i=16, k=32)),
Tensor("B", dtype.float, Dims(k=32, j=64))
]
@spio*/
