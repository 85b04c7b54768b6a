//! Direct convolution kernels, which pack nothing: the convolution's fast path on CPUs with
//! AVX-512, where the matrix product spent most of its time packing patches (measured:
//! 45-79% of the first MNIST convolution's passes). Every pass returns `false`, having
//! written nothing, where it does not apply (no AVX-512, a stride it does not handle,
//! buffers larger than its stack limits), and the caller takes the matrix product.
//!
//! The *wide* layout: an image copied into zero-padded planes of `Hp x Wp`, output position
//! `(oy, ox)` read as `p = oy Wp + ox`, so that tap `(ci, ky, kx)` reads
//! `x[ci Hp Wp + ky dil Wp + kx dil + p]`, one offset per tap and contiguous in `p`; the
//! `Wp - ow` positions at the end of each row are computed and dropped.
//!
//! - [`forward`] (stride 1): tiles of output channels by vectors of wide positions, each a
//!   sum over taps of a broadcast weight times an unaligned vector load.
//! - [`reverse_input`] (stride 1): for 3x3 and 5x5 kernels on inputs two vectors wide, row
//!   by row (each row of the output change loaded once and used by the kernel rows it
//!   reaches); otherwise each input channel's taps against the output channels over the
//!   output change's wide positions, one row per tap, summed back shifted by a gather.
//! - [`reverse_param`] (any stride for the second form): output channels by taps, summed
//!   lane by lane over wide positions, where those partial sums fit; otherwise output
//!   channels in the lanes against broadcast input values.

mod forward;
mod input;
mod layout;
mod param;
mod shifted;
mod simd;

#[doc(hidden)]
pub use simd::DirectScalar;

pub(super) use forward::forward;
pub(super) use input::reverse_input;
pub(super) use param::reverse_param;

/// Values of one padded image (or padded output change), with the slack the last tile reads.
const X_MAX: usize = 16 * 1024;
/// Values of one image's output change, channels last.
const D_MAX: usize = 10 * 1024;
/// The parameter change's sums, taps by channels.
const G_MAX: usize = 13 * 1024;
/// Taps.
const K_MAX: usize = 1024;
/// The packed weights of a shifted pass, output rows by taps.
const A_MAX: usize = 13 * 1024;
/// One image's output planes of the forward pass, with the slack the last tile writes.
const O_MAX: usize = 12 * 1024;
/// The input change's rows of one input channel (one per tap, with zero margins).
const T_MAX: usize = 24 * 1024;
/// The parameter change's partial sums, lane by lane, when positions are in the lanes.
const S_MAX: usize = 8 * 1024;

/// Whether this CPU runs the direct kernels.
fn available() -> bool {
    // The current kernel is AVX-512 only on a CPU with AVX-512F, and not while a caller
    // forces a narrower path (`gemm::with_kernel`).
    crate::gemm::Kernel::current() == crate::gemm::Kernel::Avx512
}
