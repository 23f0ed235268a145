// The wgrad kernel's walks through the stream of rows: a segment of a strip's stream
// (WgradConfig.segments) as parts of whole steps of images, and the place of a stream row in
// its part. Part of conv2d_gw8_wgrad.cu's source, which includes it after its own constants
// (types.h, kRows, kBlockRows); spio.kernels compiles both into one module
// (wgrad.compile_request).
#pragma once

// Whether the block walks a segment of the stream of rows (WgradConfig.segments) rather than a
// chunk of kBlockRows rows of kWalkImages steps.
constexpr bool kStream = kSegments > 0;
constexpr int kOutputRows = GradOutput::size<Y>().get();
static_assert(!kStream || (kWalkImages == 1 && kBlockRows == kOutputRows),
              "a segment's parts are whole steps of images, each at most every output row");

// A walk through a segment [first, end) of a strip's stream of rows, in which output row y of
// step n is at index n * kOutputRows + y. Its parts are steps of images: the first from output
// row y0 of step0 (`head` rows, as far as the segment or the step goes), then whole steps from row
// 0, the last as far as the segment goes; each is walked as its output rows plus R - 1 halo rows.
struct SegmentWalk {
    int step0;
    int y0;
    int head;
    int rows;

    SegmentWalk() = default;

    __device__ __forceinline__ SegmentWalk(int first, int end) {
        step0 = first / kOutputRows;
        y0 = first - step0 * kOutputRows;
        rows = end - first;
        head = min(kOutputRows - y0, rows);
    }

    // Stream rows of the walk: every part's output rows and halo.
    __device__ __forceinline__ int length() const {
        const int whole = (rows - head + kOutputRows - 1) / kOutputRows;
        return rows + (1 + whole) * (kRows - 1);
    }

    // Stream row J: input row j of the part of step `step`, whose output rows are y0 ...
    // y0 + rows - 1 (for the rows loaded ahead of the walk; the walk's part loop knows the
    // rest).
    struct Place {
        int step;
        int y0;
        int rows;
        int j;
    };

    __device__ __forceinline__ Place at(int J) const {
        constexpr int kPartRows = kOutputRows + kRows - 1;
        const int head_rows = head + kRows - 1;
        if (J < head_rows) return Place{step0, y0, head, J};
        const int k = (J - head_rows) / kPartRows;
        return Place{step0 + 1 + k, 0, min(kOutputRows, rows - head - k * kOutputRows),
                     J - head_rows - k * kPartRows};
    }
};

// Stream row J of a walk: input row j of its part (a step of images, or the block's chunk), the
// part's output rows, its first image and its origin: input row and column of its input row 0 and
// column 0, and its first output row and column.
struct PartRow {
    int j;
    int rows;
    N step_n;
    Y input_y0;
    X input_x0;
    Y block_y;
    X block_x;
};
