// 1 channel of 8x8 through 3x3 kernels gives 4 channels of 6x6 = 144 outputs, not 100.
use paralens::span::SpanLayer;

fn main() {
    let _conv = SpanLayer::<f32, 64, 100, 36>::conv2d::<1, 8, 8, 4, 3, 1, 0>();
}
