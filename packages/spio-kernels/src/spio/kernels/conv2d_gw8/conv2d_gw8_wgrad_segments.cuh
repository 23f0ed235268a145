// The wgrad kernel's walks through the stream of rows: a segment of a strip's stream
// (WgradConfig.segments) as parts of whole steps of images, the place of a stream row in its
// part, and where each row of a block's walk (of row chunks or of a segment) is. Part of
// conv2d_gw8_wgrad.cu's source, which includes it after its own constants (types.h, kRows,
// kBlockRows); spio.kernels compiles both into one module (wgrad.compile_request).
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

// Where each stream row of a block's walk is, as the rows' copies and TMA loads take it. A walk
// of row chunks crosses kWalkImages steps of the block's images, step_rows stream rows each
// (the first skip_top more); a segment's walk is placed by its SegmentWalk.
struct WalkPlaces {
    int rows;        // the chunk's output rows
    int input_rows;  // the input rows of each step, the first skip_top included
    int skip_top;    // 1 where each step after the first starts below the padding row above
    int step_rows;   // the stream rows of each step after the first
    int walk_rows;   // the stream rows of the whole walk
    N block_n;       // the block's first image
    Y input_y0;      // the chunk's input row 0
    X input_x0;      // the strip's input column 0
    Y block_y;       // the chunk's first output row
    X block_x;       // the strip's first output column
    SegmentWalk segment_walk;

    // Whether stream row J, input row j of its step, also brings the next step's grad_y row 0.
    __device__ __forceinline__ bool carries_next_grad_row(int J, int j) const {
        return skip_top != 0 && j == input_rows - 1 && J + 1 < walk_rows;
    }

    // With segments: the stream row at `place` (segment_walk.at(J), or the part loop's place
    // of the row it loads ahead).
    __device__ __forceinline__ PartRow segment_row(const SegmentWalk::Place& place) const {
        const Y part_y(place.y0);
        return PartRow{
            place.j, place.rows, N(place.step * kStepImages), part_y - Y(kPadTop), input_x0,
            part_y,  block_x};
    }

    // Stream row J (< walk_rows), found by division with segments (the producer warp's way:
    // off the walking warps' path). With one step the stream row is the image row, spelled out
    // so that the compiler sees it: the divisions alone changed the default tile's registers
    // (113 -> 96), so that 5 blocks fit on an SM instead of 4, which cost 4 us at 128x64x64x64
    // and 10 us at 256x64x64x64.
    __device__ __forceinline__ PartRow at(int J) const {
        if constexpr (kStream) {
            return segment_row(segment_walk.at(J));
        } else {
            const int step = kWalkImages == 1 ? 0 : (J - skip_top) / step_rows;
            return PartRow{J - step * step_rows,
                           rows,
                           block_n + N(step * kStepImages),
                           input_y0,
                           input_x0,
                           block_y,
                           block_x};
        }
    }

    // Stream row J as the walking warps find it: with segments, each row past the first
    // kPrefetch at `ahead`, the place the part loop sets for it.
    __device__ __forceinline__ PartRow at(int J, const SegmentWalk::Place& ahead) const {
        if constexpr (kStream) {
            return segment_row(J < kPrefetch ? segment_walk.at(J) : ahead);
        } else {
            return at(J);
        }
    }
};
