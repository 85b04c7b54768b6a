// A 2x3 matrix has 6 entries, not 5.
use paralens::span::Flatten;

fn main() {
    let _flat = Flatten::<2, 3, 5>::new();
}
