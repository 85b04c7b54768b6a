//! Checkpoints: parameters saved and loaded in the safetensors format, one tensor per
//! parameter array, named by its path in the model (`l1.w`, `l1.b`, `0.0.w` for a composite).
//! Scalars are `f32`, `f64`, or `u64` for the words of Boolean circuits (an array of words is
//! one tensor of shape `[N]`; a `Lanes<W>` one of `W` words).
//!
//! An array of no values (the `SVector<T, 0>` of a layer without parameters, such as a
//! pooling span layer) is not written, and a file that has one anyway still loads.
//!
//! Loading checks every name, shape and dtype, and refuses a file that does not match the
//! model with an error naming the tensor. On error the parameters are left as they were: a
//! load fills a copy and swaps it in only when everything matched.
//!
//! [`save`] and [`load`] see only the parameters, and store each array as its type says. A
//! convolution's kernel is a flat `SVector<T, P>` whose geometry the layer holds: [`save_model`]
//! and [`load_model`] ask the model ([`Layout`]) and store it as `conv1.kernel` of shape
//! `[out, in, k, k]`, so that a kernel of another geometry with as many weights is refused.
//! The two kinds of file do not mix: a file written by `save` loads with `load` (a model with
//! a convolution refuses it in `load_model`, the kernel missing), and the other way round.
//! Only [`crate::span::Conv2d`] and `SpanLayer::conv2d` know their geometry; a `SpanLayer`
//! compiled from any other span, and optimizer state saved beside the parameters with `save`
//! (`(params, state)`), are stored flat.
//!
//! ```
//! use paralens::checkpoint::{load, save};
//! use paralens::{Dense, Init, ParaExt, Relu};
//!
//! let model = Dense::<4, 8>::new().then(Relu).then(Dense::<8, 3>::new());
//! let p = model.init(0);
//! let path = std::env::temp_dir().join("paralens_doc_checkpoint.safetensors");
//! save(&path, &p).unwrap();
//! let mut q = model.init(1);
//! load(&path, &mut q).unwrap();
//! assert_eq!(*p.0.0.w, *q.0.0.w);
//! ```

use crate::Real;
use nalgebra::SMatrix;
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

/// One parameter array: its path, its shape (row-major, the format's order) and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor<T> {
    /// The path in the model, parts joined with `.`.
    pub name: String,
    /// The shape: `[]` for a scalar, `[n]` for a vector, `[rows, columns]` for a matrix.
    pub shape: Vec<usize>,
    /// The values in row-major order.
    pub data: Vec<T>,
}

/// The scalar types a checkpoint stores, with their safetensors dtype: `f32`, `f64`, and
/// `u64` for the words of Boolean circuits (64 lanes of bits, stored as they are).
pub trait Stored: Copy + fmt::Debug + PartialEq + 'static {
    /// The dtype of this scalar.
    const DTYPE: Dtype;
    /// Little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// From little-endian bytes (exactly the scalar's size).
    fn get(bytes: &[u8]) -> Self;
}

impl Stored for f32 {
    const DTYPE: Dtype = Dtype::F32;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}

impl Stored for u64 {
    const DTYPE: Dtype = Dtype::U64;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        u64::from_le_bytes(core::array::from_fn(|i| b[i]))
    }
}

impl Stored for f64 {
    const DTYPE: Dtype = Dtype::F64;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        f64::from_le_bytes(core::array::from_fn(|i| b[i]))
    }
}

/// What went wrong reading or writing a checkpoint.
///
/// Not exhaustive: a `match` needs a `_` arm, so that a new kind of error is not a breaking
/// change. Match on [`CheckpointError::kind`] to see past [`CheckpointError::InFile`].
#[derive(Debug)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The file could not be read or written.
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The bytes are not a safetensors file.
    Format(String),
    /// The model has a parameter array the file does not.
    Missing(String),
    /// The file has a tensor the model does not.
    Unexpected(String),
    /// A tensor of the wrong shape.
    Shape {
        /// The tensor's name.
        name: String,
        /// The model's shape.
        expected: Vec<usize>,
        /// The file's shape.
        found: Vec<usize>,
    },
    /// The model's [`Layout`] stores an array under a shape that does not hold its values (a
    /// bug in the model's `Init::layout`, not in the file).
    Layout {
        /// The name the array is stored under.
        name: String,
        /// The shape the layout gives it.
        shape: Vec<usize>,
        /// How many values the array has.
        len: usize,
    },
    /// A tensor of the wrong scalar type.
    Dtype {
        /// The tensor's name.
        name: String,
        /// The model's dtype.
        expected: String,
        /// The file's dtype.
        found: String,
    },
    /// One of the errors above, of the file at `path` (what [`load`], [`save`],
    /// [`load_model`] and [`save_model`] return: the bytes' errors name no file).
    InFile {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it (never `Io` or `InFile`).
        error: Box<CheckpointError>,
    },
}

impl CheckpointError {
    /// What is wrong, whichever file it was in: the error inside [`CheckpointError::InFile`],
    /// or this one (to `match` on the errors of [`load`] and [`from_bytes`] alike).
    ///
    /// ```
    /// use paralens::checkpoint::{CheckpointError, load};
    /// let path = std::env::temp_dir().join("paralens_doc_not_a_checkpoint");
    /// std::fs::write(&path, b"not a checkpoint").unwrap();
    /// let e = load::<f32, _>(&path, &mut [0.0_f32; 2]).unwrap_err();
    /// assert!(matches!(e.kind(), CheckpointError::Format(_)));
    /// assert!(e.to_string().starts_with(&format!("checkpoint {}: not a safetensors file", path.display())));
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    #[must_use]
    pub fn kind(&self) -> &CheckpointError {
        match self {
            Self::InFile { error, .. } => error,
            e => e,
        }
    }

    /// This error, of the file at `path` (an `Io` error names its file already).
    fn in_file(self, path: &Path) -> Self {
        match self {
            e @ (Self::Io { .. } | Self::InFile { .. }) => e,
            e => Self::InFile {
                path: path.to_path_buf(),
                error: Box::new(e),
            },
        }
    }

    /// What is wrong, without saying which file.
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { error, .. } => write!(f, "{error}"),
            Self::InFile { error, .. } => error.describe(f),
            Self::Format(e) => write!(f, "not a safetensors file: {e}"),
            Self::Missing(n) => write!(f, "the file has no tensor `{n}`, which the model needs"),
            Self::Unexpected(n) => write!(f, "the file has a tensor `{n}` the model does not have"),
            Self::Shape {
                name,
                expected,
                found,
            } => write!(
                f,
                "tensor `{name}` has shape {found:?}, the model's is {expected:?}"
            ),
            Self::Layout { name, shape, len } => write!(
                f,
                "the model stores `{name}` as shape {shape:?}, which does not hold its {len} values (its `Init::layout` is wrong)"
            ),
            Self::Dtype {
                name,
                expected,
                found,
            } => write!(
                f,
                "tensor `{name}` holds {found}, the model's parameters are {expected}"
            ),
        }
    }
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, .. } | Self::InFile { path, .. } => {
                write!(f, "checkpoint {}: ", path.display())?;
            }
            _ => f.write_str("checkpoint: ")?,
        }
        self.describe(f)
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { error, .. } => Some(error),
            Self::InFile { error, .. } => error.source(),
            _ => None,
        }
    }
}

/// The error of reading or writing the file at `path`, naming it.
fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |error| CheckpointError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// The parameter arrays of a value, by path. Derived with `Tangent` for parameter structs;
/// implemented for scalars, static matrices, boxes, tuples and arrays.
pub trait Tensors<T: Stored> {
    /// Appends this value's arrays, under `path`.
    fn tensors(&self, path: &str, out: &mut Vec<Tensor<T>>);
    /// Reads this value's arrays from `src`, under `path`.
    ///
    /// # Errors
    /// A missing tensor, or one of the wrong shape or dtype.
    fn load_from(&mut self, path: &str, src: &mut Source<'_>) -> Result<(), CheckpointError>;

    /// The value, when this is one stored scalar (so that an array of them is stored as one
    /// tensor of shape `[N]`, not `N` tensors).
    fn as_scalar(&self) -> Option<T> {
        None
    }

    /// Sets the value from a stored scalar; `false` when this is not one.
    fn set_scalar(&mut self, _value: T) -> bool {
        false
    }
}

/// How a model stores the parameter arrays whose type does not carry their shape: a
/// convolution's kernel is an `SVector<T, P>` in memory, its geometry kept by the layer, and
/// is saved as `path.kernel` of shape `[out, in, k, k]`. Filled by [`Init::layout`], read by
/// [`save_model`] and [`load_model`]. Arrays it does not mention are stored as their type says.
///
/// ```
/// use paralens::checkpoint::Layout;
/// use paralens::Init;
/// use paralens::span::Conv2d;
///
/// let conv = Conv2d::<f32, 36, 32, 18>::new::<1, 6, 6, 2, 3, 1, 0>();
/// let mut layout = Layout::new();
/// conv.layout("c1", &mut layout);
/// assert_eq!(layout.get("c1"), Some(("c1.kernel", &[2, 1, 3, 3][..])));
/// ```
///
/// [`Init::layout`]: crate::Init::layout
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// By the path `Tensors` gives the array: the name and shape it is stored under.
    stored: BTreeMap<String, (String, Vec<usize>)>,
}

impl Layout {
    /// No array stored other than as its type says.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores the array at `path` as `name`, of `shape` (row-major over the array's values in
    /// memory order, so the product of `shape` is the array's length).
    pub fn store_as(&mut self, path: &str, name: String, shape: Vec<usize>) {
        self.stored.insert(path.to_string(), (name, shape));
    }

    /// The name and shape the array at `path` is stored under, if not as its type says.
    #[must_use]
    pub fn get(&self, path: &str) -> Option<(&str, &[usize])> {
        self.stored
            .get(path)
            .map(|(n, s)| (n.as_str(), s.as_slice()))
    }

    /// The layout of `model`, with its arrays' paths from the top.
    #[must_use]
    pub fn of<M: crate::Init + ?Sized>(model: &M) -> Self {
        let mut layout = Self::new();
        model.layout("", &mut layout);
        layout
    }
}

/// `path.part`, or `part` at the top.
#[doc(hidden)]
#[must_use]
pub fn join(path: &str, part: &str) -> String {
    if path.is_empty() {
        part.to_string()
    } else {
        format!("{path}.{part}")
    }
}

/// The tensors of a file being loaded, and which of them were read.
pub struct Source<'a> {
    file: SafeTensors<'a>,
    read: BTreeSet<String>,
    layout: &'a Layout,
}

impl Source<'_> {
    /// The values of tensor `name`, checked to have `shape` and `T`'s dtype.
    ///
    /// # Errors
    /// Missing, or of another shape or dtype.
    pub fn take<T: Stored>(
        &mut self,
        name: &str,
        shape: &[usize],
    ) -> Result<Vec<T>, CheckpointError> {
        let layout = self.layout;
        // An array the model stores under another name and shape (same values, same order).
        let (name, shape) = match layout.get(name) {
            Some((stored, stored_shape)) => {
                holds(stored, stored_shape, shape.iter().product())?;
                (stored, stored_shape)
            }
            None => (name, shape),
        };
        let view = match self.file.tensor(name) {
            Ok(view) => view,
            // An array of no values (a layer with no parameters, `SVector<T, 0>`) is not
            // written; a file that has it anyway is read as usual.
            Err(_) if shape.contains(&0) => return Ok(Vec::new()),
            Err(_) => return Err(CheckpointError::Missing(name.to_string())),
        };
        if view.dtype() != T::DTYPE {
            return Err(CheckpointError::Dtype {
                name: name.to_string(),
                expected: format!("{:?}", T::DTYPE),
                found: format!("{:?}", view.dtype()),
            });
        }
        if view.shape() != shape {
            return Err(CheckpointError::Shape {
                name: name.to_string(),
                expected: shape.to_vec(),
                found: view.shape().to_vec(),
            });
        }
        self.read.insert(name.to_string());
        let size = core::mem::size_of::<T>();
        Ok(view.data().chunks_exact(size).map(T::get).collect())
    }
}

/// `shape` holds exactly `len` values: else the model's [`Layout`] is wrong (a bug in its
/// `Init::layout`), reported rather than saved or loaded into the wrong places.
fn holds(name: &str, shape: &[usize], len: usize) -> Result<(), CheckpointError> {
    if shape.iter().product::<usize>() == len {
        Ok(())
    } else {
        Err(CheckpointError::Layout {
            name: name.to_string(),
            shape: shape.to_vec(),
            len,
        })
    }
}

macro_rules! scalar_tensors {
    ($($t:ty),*) => {$(
        /// A scalar parameter: shape `[]`.
        impl Tensors<$t> for $t {
            fn tensors(&self, path: &str, out: &mut Vec<Tensor<$t>>) {
                out.push(Tensor {
                    name: path.to_string(),
                    shape: Vec::new(),
                    data: vec![*self],
                });
            }
            fn load_from(&mut self, path: &str, src: &mut Source<'_>) -> Result<(), CheckpointError> {
                *self = src.take::<$t>(path, &[])?[0];
                Ok(())
            }
            fn as_scalar(&self) -> Option<$t> {
                Some(*self)
            }
            fn set_scalar(&mut self, value: $t) -> bool {
                *self = value;
                true
            }
        }
    )*};
}
scalar_tensors!(f32, f64, u64);

/// Shape `[R, C]`, or `[R]` for a vector; values row by row. Read and written in place: a
/// transposed copy or a matrix built from the file would pass through the stack (400 KB for
/// a 784x128 layer; more than a 2 MiB thread has to spare in a debug build).
impl<T: Stored + nalgebra::Scalar, const R: usize, const C: usize> Tensors<T> for SMatrix<T, R, C> {
    fn tensors(&self, path: &str, out: &mut Vec<Tensor<T>>) {
        out.push(Tensor {
            name: path.to_string(),
            shape: shape(R, C),
            data: (0..R)
                .flat_map(|r| (0..C).map(move |c| self[(r, c)]))
                .collect(),
        });
    }
    fn load_from(&mut self, path: &str, src: &mut Source<'_>) -> Result<(), CheckpointError> {
        let data = src.take::<T>(path, &shape(R, C))?;
        // `take` checked the shape: `R * C` values, row by row.
        for (k, v) in data.into_iter().enumerate() {
            self[(k / C, k % C)] = v;
        }
        Ok(())
    }
}

fn shape(r: usize, c: usize) -> Vec<usize> {
    if c == 1 { vec![r] } else { vec![r, c] }
}

/// A matrix kept on the heap, stored as the static matrix it holds.
impl<T: Stored + Real, const R: usize, const C: usize> Tensors<T> for crate::HeapMatrix<T, R, C> {
    fn tensors(&self, path: &str, out: &mut Vec<Tensor<T>>) {
        (**self).tensors(path, out);
    }
    fn load_from(&mut self, path: &str, src: &mut Source<'_>) -> Result<(), CheckpointError> {
        (**self).load_from(path, src)
    }
}

/// The state of an Adam-like optimizer: the moments `m.<path>` and `v.<path>` and the step's
/// `beta1_t`, `beta2_t`.
macro_rules! moments_tensors {
    ($state:ty) => {
        impl<T: Stored + Tensors<T>, P: Tensors<T>> Tensors<T> for $state {
            fn tensors(&self, path: &str, out: &mut Vec<Tensor<T>>) {
                self.m.tensors(&join(path, "m"), out);
                self.v.tensors(&join(path, "v"), out);
                self.beta1_t.tensors(&join(path, "beta1_t"), out);
                self.beta2_t.tensors(&join(path, "beta2_t"), out);
            }
            fn load_from(
                &mut self,
                path: &str,
                src: &mut Source<'_>,
            ) -> Result<(), CheckpointError> {
                self.m.load_from(&join(path, "m"), src)?;
                self.v.load_from(&join(path, "v"), src)?;
                self.beta1_t.load_from(&join(path, "beta1_t"), src)?;
                self.beta2_t.load_from(&join(path, "beta2_t"), src)
            }
        }
    };
}

// Adam's state: save it beside the parameters as a pair, `(params, state)`, to resume training
// exactly. `RiemannianAdam`'s is named the same way. (Momentum, Nesterov, RMSprop and AdaGrad
// keep one value of the parameters' type, saved as the parameters are; SGD keeps none.)
moments_tensors!(crate::optim::AdamState<P, T>);
moments_tensors!(crate::optim::RiemannianAdamState<P, T>);

impl<T: Stored, X: Tensors<T>> Tensors<T> for Box<X> {
    fn tensors(&self, path: &str, out: &mut Vec<Tensor<T>>) {
        (**self).tensors(path, out);
    }
    fn load_from(&mut self, path: &str, src: &mut Source<'_>) -> Result<(), CheckpointError> {
        (**self).load_from(path, src)
    }
}

impl<T: Stored> Tensors<T> for () {
    fn tensors(&self, _: &str, _: &mut Vec<Tensor<T>>) {}
    fn load_from(&mut self, _: &str, _: &mut Source<'_>) -> Result<(), CheckpointError> {
        Ok(())
    }
}

/// An array of scalars (the words of a Boolean circuit's layer) is one tensor of shape
/// `[N]`; an array of anything else is stored element by element, under `path.0`, `path.1`...
impl<T: Stored, X: Tensors<T>, const N: usize> Tensors<T> for [X; N] {
    fn tensors(&self, path: &str, out: &mut Vec<Tensor<T>>) {
        let values: Option<Vec<T>> = self.iter().map(Tensors::as_scalar).collect();
        match values {
            Some(data) if N > 0 => out.push(Tensor {
                name: path.to_string(),
                shape: vec![N],
                data,
            }),
            _ => {
                for (i, x) in self.iter().enumerate() {
                    x.tensors(&join(path, &i.to_string()), out);
                }
            }
        }
    }
    fn load_from(&mut self, path: &str, src: &mut Source<'_>) -> Result<(), CheckpointError> {
        if N > 0 && self.iter().all(|x| x.as_scalar().is_some()) {
            let data = src.take::<T>(path, &[N])?;
            for (x, v) in self.iter_mut().zip(data) {
                x.set_scalar(v);
            }
            return Ok(());
        }
        for (i, x) in self.iter_mut().enumerate() {
            x.load_from(&join(path, &i.to_string()), src)?;
        }
        Ok(())
    }
}

macro_rules! tuple_tensors {
    ($(($($name:ident $idx:tt),+))*) => {$(
        impl<T: Stored, $($name: Tensors<T>),+> Tensors<T> for ($($name,)+) {
            fn tensors(&self, path: &str, out: &mut Vec<Tensor<T>>) {
                $(self.$idx.tensors(&join(path, stringify!($idx)), out);)+
            }
            fn load_from(&mut self, path: &str, src: &mut Source<'_>) -> Result<(), CheckpointError> {
                $(self.$idx.load_from(&join(path, stringify!($idx)), src)?;)+
                Ok(())
            }
        }
    )*};
}

tuple_tensors! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
}

/// The safetensors bytes of `params`, each array stored as its type says (a convolution's
/// kernel flat, `[P]`: use [`model_to_bytes`] to store it with its geometry).
///
/// # Errors
/// Two arrays with one name (a model whose paths collide), which the format refuses.
pub fn to_bytes<T: Stored, P: Tensors<T>>(params: &P) -> Result<Vec<u8>, CheckpointError> {
    bytes_as(params, &Layout::new())
}

/// The safetensors bytes of `params`, the parameters of `model`, each array named and shaped
/// as the model's [`Layout`] says (`c1.kernel` of shape `[out, in, k, k]` for a convolution).
///
/// ```
/// use paralens::checkpoint::model_to_bytes;
/// use paralens::span::Conv2d;
/// use paralens::Init;
///
/// let conv = Conv2d::<f32, 36, 32, 18>::new::<1, 6, 6, 2, 3, 1, 0>();
/// let bytes = model_to_bytes(&conv, &conv.init(0)).unwrap();
/// let file = safetensors::SafeTensors::deserialize(&bytes).unwrap();
/// assert_eq!(file.tensor("kernel").unwrap().shape(), &[2, 1, 3, 3]);
/// ```
///
/// # Errors
/// Two arrays with one name, or a layout whose shape does not hold its array.
pub fn model_to_bytes<T: Stored, M: crate::Init + ?Sized>(
    model: &M,
    params: &M::Param,
) -> Result<Vec<u8>, CheckpointError>
where
    M::Param: Tensors<T>,
{
    bytes_as(params, &Layout::of(model))
}

fn bytes_as<T: Stored, P: Tensors<T>>(
    params: &P,
    layout: &Layout,
) -> Result<Vec<u8>, CheckpointError> {
    let mut tensors = Vec::new();
    params.tensors("", &mut tensors);
    let mut bytes: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::with_capacity(tensors.len());
    // Arrays of no values (the parameters of a layer that has none) are not written.
    for t in tensors.into_iter().filter(|t| !t.shape.contains(&0)) {
        let mut b = Vec::with_capacity(t.data.len() * core::mem::size_of::<T>());
        for v in &t.data {
            v.put(&mut b);
        }
        let (name, shape) = match layout.get(&t.name) {
            Some((stored, shape)) => {
                holds(stored, shape, t.data.len())?;
                (stored.to_string(), shape.to_vec())
            }
            // A single unnamed scalar or matrix is stored as `param`.
            None if t.name.is_empty() => ("param".to_string(), t.shape),
            None => (t.name, t.shape),
        };
        bytes.push((name, shape, b));
    }
    let mut names = BTreeSet::new();
    for (n, _, _) in &bytes {
        if !names.insert(n.clone()) {
            return Err(CheckpointError::Format(format!(
                "two parameter arrays are named `{n}`"
            )));
        }
    }
    let views: BTreeMap<String, TensorView<'_>> = bytes
        .iter()
        .map(|(n, s, b)| {
            TensorView::new(T::DTYPE, s.clone(), b)
                .map(|v| (n.clone(), v))
                .map_err(|e| CheckpointError::Format(e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    safetensors::serialize(views, None).map_err(|e| CheckpointError::Format(e.to_string()))
}

/// Reads `params` from safetensors bytes: every tensor the model has, of its shape and
/// dtype, and no other. `params` is changed only when all of it matched.
///
/// # Errors
/// See [`CheckpointError`]; the first mismatch found, naming its tensor.
pub fn from_bytes<T: Stored, P: Tensors<T> + Clone>(
    bytes: &[u8],
    params: &mut P,
) -> Result<(), CheckpointError> {
    read_as(bytes, params, &Layout::new())
}

/// Reads `params`, the parameters of `model`, from bytes written by [`model_to_bytes`]:
/// every tensor named and shaped as the model's [`Layout`] says, and no other. `params` is
/// changed only when all of it matched; two convolutions with the same number of weights but
/// other geometries do not load into each other.
///
/// # Errors
/// See [`CheckpointError`]; the first mismatch found, naming its tensor as stored.
pub fn model_from_bytes<T: Stored, M: crate::Init + ?Sized>(
    bytes: &[u8],
    model: &M,
    params: &mut M::Param,
) -> Result<(), CheckpointError>
where
    M::Param: Tensors<T> + Clone,
{
    read_as(bytes, params, &Layout::of(model))
}

fn read_as<T: Stored, P: Tensors<T> + Clone>(
    bytes: &[u8],
    params: &mut P,
    layout: &Layout,
) -> Result<(), CheckpointError> {
    let file =
        SafeTensors::deserialize(bytes).map_err(|e| CheckpointError::Format(e.to_string()))?;
    let mut src = Source {
        file,
        read: BTreeSet::new(),
        layout,
    };
    let mut copy = params.clone();
    let mut names = Vec::new();
    copy.tensors("", &mut names);
    if names.len() == 1 && names[0].name.is_empty() && layout.get("").is_none() {
        // A single array was saved as `param`.
        let mut only = SingleParam(&mut copy);
        only.load(&mut src)?;
    } else {
        copy.load_from("", &mut src)?;
    }
    if let Some(extra) = src
        .file
        .names()
        .into_iter()
        .find(|n| !src.read.contains(*n))
    {
        return Err(CheckpointError::Unexpected(extra.to_string()));
    }
    *params = copy;
    Ok(())
}

/// A value saved as one unnamed array, loaded under the name `param`.
struct SingleParam<'p, P>(&'p mut P);

impl<P> SingleParam<'_, P> {
    fn load<T: Stored>(&mut self, src: &mut Source<'_>) -> Result<(), CheckpointError>
    where
        P: Tensors<T>,
    {
        self.0.load_from("param", src)
    }
}

/// Saves `params` to a safetensors file at `path`.
///
/// # Errors
/// The file cannot be written, or two arrays share a name.
pub fn save<T: Stored, P: Tensors<T>>(
    path: impl AsRef<Path>,
    params: &P,
) -> Result<(), CheckpointError> {
    let path = path.as_ref();
    let bytes = to_bytes(params).map_err(|e| e.in_file(path))?;
    std::fs::write(path, bytes).map_err(io_at(path))
}

/// Loads `params` from the safetensors file at `path` (see [`from_bytes`]).
///
/// # Errors
/// The file cannot be read, is not safetensors, or does not match the model.
pub fn load<T: Stored, P: Tensors<T> + Clone>(
    path: impl AsRef<Path>,
    params: &mut P,
) -> Result<(), CheckpointError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(io_at(path))?;
    from_bytes(&bytes, params).map_err(|e| e.in_file(path))
}

/// Saves `params`, the parameters of `model`, to a safetensors file at `path`, each array
/// named and shaped as the model's [`Layout`] says (see [`model_to_bytes`]).
///
/// # Errors
/// The file cannot be written, or two arrays share a name.
pub fn save_model<T: Stored, M: crate::Init + ?Sized>(
    path: impl AsRef<Path>,
    model: &M,
    params: &M::Param,
) -> Result<(), CheckpointError>
where
    M::Param: Tensors<T>,
{
    let path = path.as_ref();
    let bytes = model_to_bytes(model, params).map_err(|e| e.in_file(path))?;
    std::fs::write(path, bytes).map_err(io_at(path))
}

/// Loads `params`, the parameters of `model`, from the safetensors file at `path` (see
/// [`model_from_bytes`]).
///
/// # Errors
/// The file cannot be read, is not safetensors, or does not match the model.
pub fn load_model<T: Stored, M: crate::Init + ?Sized>(
    path: impl AsRef<Path>,
    model: &M,
    params: &mut M::Param,
) -> Result<(), CheckpointError>
where
    M::Param: Tensors<T> + Clone,
{
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(io_at(path))?;
    model_from_bytes(&bytes, model, params).map_err(|e| e.in_file(path))
}
