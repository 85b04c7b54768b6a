// A convolution whose layer type fits its geometry builds. (A passing case also makes
// trybuild run `cargo build`, which is where const-evaluated size checks are reported.)
use paralens::span::SpanLayer;

fn main() {
    let _conv = SpanLayer::<f32, 64, 144, 36>::conv2d::<1, 8, 8, 4, 3, 1, 0>();
}
