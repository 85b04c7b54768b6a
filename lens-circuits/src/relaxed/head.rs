//! [`GroupSum`]: class scores read off groups of gates.

use core::marker::PhantomData;
use lens_core::{HeapMatrix, Init, Para, Real};
use rand::Rng;

/// `C` class scores from `I` gates: class `c` sums the gates `c * I / C .. (c + 1) * I / C`,
/// divided by the temperature `tau`: the sums range over `0..=I / C`, and a larger `tau`
/// makes the softmax over them softer. No parameters.
#[derive(Clone, Copy, Debug)]
pub struct GroupSum<const I: usize, const C: usize, T = f32> {
    tau: T,
    scalar: PhantomData<fn() -> T>,
}

impl<const I: usize, const C: usize, T: Real> GroupSum<I, C, T> {
    /// The head with temperature `tau`.
    ///
    /// # Panics
    /// `tau` is not a positive finite number; `C` does not divide `I` (a compile-time check).
    #[must_use]
    pub fn new(tau: T) -> Self {
        const {
            assert!(
                C >= 1 && I.is_multiple_of(C),
                "the classes share the gates in equal groups"
            )
        };
        assert!(
            tau.finite() && tau > T::zero(),
            "a temperature is a positive finite number, not {tau}"
        );
        Self {
            tau,
            scalar: PhantomData,
        }
    }

    /// The temperature.
    #[must_use]
    pub fn tau(&self) -> T {
        self.tau
    }
}

impl<const I: usize, const C: usize, T: Real> Init for GroupSum<I, C, T> {
    type Param = ();
    fn init_with<R: Rng + ?Sized>(&self, _: &mut R) {}
}

impl<const I: usize, const C: usize, const B: usize, T: Real> Para<HeapMatrix<T, I, B>>
    for GroupSum<I, C, T>
{
    type Param = ();
    type Out = HeapMatrix<T, C, B>;

    fn forward(&self, _: &(), x: HeapMatrix<T, I, B>) -> Self::Out {
        let group = I / C;
        let scale = T::one() / self.tau;
        let mut y = HeapMatrix::<T, C, B>::zeros();
        let (xs, ys) = (x.as_slice(), y.as_mut_slice());
        for j in 0..B {
            for c in 0..C {
                let s = xs[I * j + group * c..I * j + group * (c + 1)]
                    .iter()
                    .fold(T::zero(), |s, &v| s + v);
                ys[C * j + c] = s * scale;
            }
        }
        y
    }

    fn vjp(
        &self,
        p: &(),
        x: HeapMatrix<T, I, B>,
    ) -> (
        Self::Out,
        impl FnOnce(Self::Out, &mut ()) -> HeapMatrix<T, I, B>,
    ) {
        let tau = self.tau;
        (self.forward(p, x), move |dy: Self::Out, _: &mut ()| {
            let group = I / C;
            let mut dx = HeapMatrix::<T, I, B>::zeros();
            let (dys, dxs) = (dy.as_slice(), dx.as_mut_slice());
            for j in 0..B {
                for c in 0..C {
                    let d = dys[C * j + c] / tau;
                    for v in &mut dxs[I * j + group * c..I * j + group * (c + 1)] {
                        *v = d;
                    }
                }
            }
            dx
        })
    }
}
