//! Checkpoints that know the model: a convolution's kernel, flat `[P]` in memory, is saved as
//! `<layer>.kernel` of shape `[out, in, k, k]` (what other frameworks write), the file's 4-D
//! kernel computes the layer's own output, and two convolutions with as many weights but
//! other geometries no longer load into each other.

use paralens::checkpoint::{
    CheckpointError, Layout, Tensors, load, load_model, model_from_bytes, model_to_bytes, save,
    save_model, to_bytes,
};
use paralens::prelude::*;
use paralens::span::{Bias, Conv2d, SpanLayer};
use safetensors::SafeTensors;

para! {
    /// Two channels of 6x6 -> four of 4x4 (kernel 3), a bias per output, dense to 3.
    #[derive(Clone, Debug)]
    pub struct Net {
        conv1: Conv2d<f64, 72, 64, 72>,
        b1: Bias<64, f64>,
        fc: Dense<64, 3, f64>,
    }
    fn forward(&self, x: SVector<f64, 72>) -> SVector<f64, 3> {
        self.fc(relu(self.b1(self.conv1(x))))
    }
}

fn net() -> Net {
    Net {
        conv1: Conv2d::new::<2, 6, 6, 4, 3, 1, 0>(),
        b1: Bias::new(),
        fc: Dense::new(),
    }
}

fn image() -> SVector<f64, 72> {
    SVector::from_fn(|i, _| ((i * 7 + 3) % 11) as f64 / 11.0 - 0.4)
}

/// The file's tensor `name` as `f64` values, with its shape.
fn read(bytes: &[u8], name: &str) -> (Vec<usize>, Vec<f64>) {
    let file = SafeTensors::deserialize(bytes).unwrap();
    let t = file.tensor(name).unwrap();
    let values = t
        .data()
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    (t.shape().to_vec(), values)
}

#[test]
fn a_convolution_is_saved_as_a_4d_kernel_named_by_its_layer() {
    let (model, p) = (net(), net().init(3));
    let bytes = model_to_bytes(&model, &p).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let mut names = file.names();
    names.sort_unstable();
    assert_eq!(names, ["b1", "conv1.kernel", "fc.b", "fc.w"]);
    let (shape, k) = read(&bytes, "conv1.kernel");
    assert_eq!(shape, [4, 2, 3, 3]);

    // The file's kernel, read as [out][in][ky][kx] by a plain loop that knows nothing of the
    // library's index, computes the layer's output: the shape is the kernel's, not a reshape.
    let x = image();
    let y = model.conv1.forward(&p.conv1, x);
    for o in 0..4 {
        for oy in 0..4 {
            for ox in 0..4 {
                let mut sum = 0.0;
                for i in 0..2 {
                    for ky in 0..3 {
                        for kx in 0..3 {
                            let w = k[((o * 2 + i) * 3 + ky) * 3 + kx];
                            sum += w * x[(i * 6 + oy + ky) * 6 + ox + kx];
                        }
                    }
                }
                let got = y[(o * 4 + oy) * 4 + ox];
                assert!(
                    (sum - got).abs() < 1e-12,
                    "({o}, {oy}, {ox}): {sum} vs {got}"
                );
            }
        }
    }
}

#[test]
fn a_model_aware_round_trip_is_bit_for_bit() {
    let model = net();
    let p = model.init(3);
    let path = std::env::temp_dir().join("paralens_layout_roundtrip.safetensors");
    save_model(&path, &model, &p).unwrap();
    let mut q = model.init(4);
    assert_ne!(p, q);
    load_model(&path, &model, &mut q).unwrap();
    assert_eq!(p, q);
    for (a, b) in p.conv1.iter().zip(q.conv1.iter()) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
    assert_eq!(model.forward(&p, image()), model.forward(&q, image()));
}

#[test]
fn composites_name_the_kernel_by_its_place() {
    let conv = Conv2d::<f32, 36, 32, 18>::new::<1, 6, 6, 2, 3, 1, 0>();
    let model = conv.then(Relu).then(Dense::<32, 2>::new());
    let p = model.init(0);
    let bytes = model_to_bytes(&model, &p).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(file.tensor("0.0.kernel").unwrap().shape(), &[2, 1, 3, 3]);
    let mut q = model.init(1);
    model_from_bytes(&bytes, &model, &mut q).unwrap();
    assert_eq!(q.0.0, p.0.0);
    // A convolution alone is stored as `kernel`.
    let bytes = model_to_bytes(&conv, &p.0.0).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(file.names(), ["kernel"]);
    let mut k = conv.init(7);
    model_from_bytes(&bytes, &conv, &mut k).unwrap();
    assert_eq!(k, p.0.0);
    // A batched model stores its parameters at the same path as the model.
    let batched = conv.batch::<4>();
    assert_eq!(Layout::of(&batched), Layout::of(&conv));
}

#[test]
fn a_span_layer_convolution_is_stored_as_a_kernel_too() {
    let conv = SpanLayer::<f32, 64, 144, 36>::conv2d::<1, 8, 8, 4, 3, 1, 0>();
    let bytes = model_to_bytes(&conv, &conv.init(0)).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(file.tensor("kernel").unwrap().shape(), &[4, 1, 3, 3]);
    // A span layer built from any span has no kernel shape: stored flat, as its type says.
    let dense = SpanLayer::<f32, 4, 3, 12>::dense();
    assert_eq!(Layout::of(&dense), Layout::new());
}

para! {
    /// One channel of 6x6 -> eight of 4x4: as many weights (72) as `Net`'s convolution.
    #[derive(Clone, Debug)]
    pub struct Other {
        conv1: Conv2d<f64, 36, 128, 72>,
    }
    fn forward(&self, x: SVector<f64, 36>) -> SVector<f64, 128> {
        self.conv1(x)
    }
}

para! {
    /// `Net`'s convolution alone.
    #[derive(Clone, Debug)]
    pub struct ConvOnly {
        conv1: Conv2d<f64, 72, 64, 72>,
    }
    fn forward(&self, x: SVector<f64, 72>) -> SVector<f64, 64> {
        self.conv1(x)
    }
}

#[test]
fn convolutions_of_other_geometries_do_not_load_into_each_other() {
    let mine = ConvOnly {
        conv1: Conv2d::new::<2, 6, 6, 4, 3, 1, 0>(),
    };
    let other = Other {
        conv1: Conv2d::new::<1, 6, 6, 8, 3, 1, 0>(),
    };
    let p = mine.init(0);
    // Saved flat, the 72 weights of a [4, 2, 3, 3] kernel load as an [8, 1, 3, 3] one.
    let dir = std::env::temp_dir();
    let flat = dir.join("paralens_layout_flat.safetensors");
    save(&flat, &p).unwrap();
    let mut q = other.init(1);
    load(&flat, &mut q).unwrap();
    // Saved with the model, they are refused, the error naming the kernel and both shapes.
    let shaped = dir.join("paralens_layout_shaped.safetensors");
    save_model(&shaped, &mine, &p).unwrap();
    let mut q = other.init(1);
    let before = q.clone();
    let e = load_model(&shaped, &other, &mut q).unwrap_err();
    assert!(
        matches!(e.kind(), CheckpointError::Shape { name, expected, found }
            if name == "conv1.kernel" && expected == &[8, 1, 3, 3] && found == &[4, 2, 3, 3]),
        "{e}"
    );
    assert!(e.to_string().contains("conv1.kernel"), "{e}");
    assert_eq!(q, before, "a refused load changed the parameters");
    // A flat file is not silently taken as a shaped one, nor the other way round.
    let e = load_model(&flat, &mine, &mut mine.init(2)).unwrap_err();
    assert!(
        matches!(e.kind(), CheckpointError::Missing(n) if n == "conv1.kernel"),
        "{e}"
    );
    let e = load(&shaped, &mut mine.init(2)).unwrap_err();
    assert!(
        matches!(e.kind(), CheckpointError::Missing(n) if n == "conv1"),
        "{e}"
    );
}

/// A model whose layout is wrong: it claims its four weights are a 3-vector.
struct Liar;

impl Init for Liar {
    type Param = SVector<f64, 4>;
    fn init_with<R: rand::Rng + ?Sized>(&self, _rng: &mut R) -> Self::Param {
        SVector::from_element(0.5)
    }
    fn layout(&self, path: &str, layout: &mut Layout) {
        layout.store_as(path, "w".to_string(), vec![3]);
    }
}

#[test]
fn a_layout_that_does_not_hold_its_array_is_an_error_not_a_misread() {
    let p = Liar.init(0);
    let e = model_to_bytes(&Liar, &p).unwrap_err();
    assert!(
        matches!(&e, CheckpointError::Layout { name, shape, len: 4 } if name == "w" && shape == &[3]),
        "{e}"
    );
    assert!(e.to_string().contains("`w`"), "{e}");
    let bytes = to_bytes(&p).unwrap();
    let mut q = p;
    let e = model_from_bytes(&bytes, &Liar, &mut q).unwrap_err();
    assert!(matches!(&e, CheckpointError::Layout { .. }), "{e}");
    // The derived parameter struct's arrays, as `Tensors` names them, are what a layout keys.
    let mut arrays = Vec::new();
    Tensors::<f64>::tensors(&net().init(0), "", &mut arrays);
    let layout = Layout::of(&net());
    let keyed: Vec<&str> = arrays
        .iter()
        .filter_map(|t| layout.get(&t.name).map(|(n, _)| n))
        .collect();
    assert_eq!(keyed, ["conv1.kernel"]);
}
