//! The float methods people write: `exp ln sqrt powi powf sin cos tanh abs max min recip`.

macro_rules! unary_rule {
    ($(#[$doc:meta])* $rule:ident :: $m:ident, |$x:ident, $y:ident, $d:ident| $fwd:expr => $rev:expr) => {
        $(#[$doc])*
        pub trait $rule: Sized {
            /// The forward value and its pullback.
            fn $m(self) -> (Self, impl FnOnce(Self) -> Self);
        }

        impl $rule for f32 {
            #[inline]
            fn $m(self) -> (f32, impl FnOnce(f32) -> f32) {
                let $x = self;
                let $y: f32 = $fwd;
                ($y, #[inline(always)] move |$d: f32| {
                    let _ = ($x, $y);
                    $rev
                })
            }
        }

        impl $rule for f64 {
            #[inline]
            fn $m(self) -> (f64, impl FnOnce(f64) -> f64) {
                let $x = self;
                let $y: f64 = $fwd;
                ($y, #[inline(always)] move |$d: f64| {
                    let _ = ($x, $y);
                    $rev
                })
            }
        }
    };
}

unary_rule!(
    /// `exp x`; reverse `d exp x`.
    ExpRule::exp_vjp, |x, y, d| x.exp() => d * y);
unary_rule!(
    /// `ln x`; reverse `d / x`.
    LnRule::ln_vjp, |x, y, d| x.ln() => d / x);
unary_rule!(
    /// `sqrt x`; reverse `d / (2 sqrt x)`.
    SqrtRule::sqrt_vjp, |x, y, d| x.sqrt() => d / (y + y));
unary_rule!(
    /// `sin x`; reverse `d cos x`.
    SinRule::sin_vjp, |x, y, d| x.sin() => d * x.cos());
unary_rule!(
    /// `cos x`; reverse `-d sin x`.
    CosRule::cos_vjp, |x, y, d| x.cos() => -d * x.sin());
unary_rule!(
    /// `tanh x`; reverse `d (1 - tanh^2 x)`.
    TanhRule::tanh_vjp, |x, y, d| x.tanh() => d * (1.0 - y * y));
unary_rule!(
    /// `|x|`; reverse `d sign(x)`, with the subgradient 0 at 0.
    AbsRule::abs_vjp, |x, y, d| x.abs() =>
        if x > 0.0 { d } else if x < 0.0 { -d } else { 0.0 });
unary_rule!(
    /// `1 / x`; reverse `-d / x^2`.
    RecipRule::recip_vjp, |x, y, d| x.recip() => -d * y * y);

/// `x.powi(n)`; reverse `d n x^(n-1)` (the integer exponent gets no change).
pub trait PowiRule: Sized {
    /// The forward value and its pullback.
    fn powi_vjp(self, n: i32) -> (Self, impl FnOnce(Self) -> Self);
}

/// `x.powf(a)`; reverse `(d a x^(a-1), d x^a ln x)` (the second is 0 where `x <= 0`).
pub trait PowfRule: Sized {
    /// The forward value and its pullback.
    fn powf_vjp(self, a: Self) -> (Self, impl FnOnce(Self) -> (Self, Self));
}

/// `x.max(y)`; the change goes to the larger operand (to `x` on a tie).
pub trait MaxRule: Sized {
    /// The forward value and its pullback.
    fn max_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self));
}

/// `x.min(y)`; the change goes to the smaller operand (to `x` on a tie).
pub trait MinRule: Sized {
    /// The forward value and its pullback.
    fn min_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self));
}

macro_rules! param_rules {
    ($($t:ty),*) => {$(
        impl PowiRule for $t {
            #[inline]
            fn powi_vjp(self, n: i32) -> ($t, impl FnOnce($t) -> $t) {
                (self.powi(n), #[inline(always)] move |d: $t| {
                    if n == 0 { 0.0 } else { d * (n as $t) * self.powi(n - 1) }
                })
            }
        }

        impl PowfRule for $t {
            #[inline]
            fn powf_vjp(self, a: $t) -> ($t, impl FnOnce($t) -> ($t, $t)) {
                let y = self.powf(a);
                (y, #[inline(always)] move |d: $t| {
                    let dx = d * a * self.powf(a - 1.0);
                    let da = if self > 0.0 { d * y * self.ln() } else { 0.0 };
                    (dx, da)
                })
            }
        }

        impl MaxRule for $t {
            #[inline]
            fn max_vjp(self, y: $t) -> ($t, impl FnOnce($t) -> ($t, $t)) {
                let first = self >= y;
                (if first { self } else { y }, #[inline(always)] move |d: $t| {
                    if first { (d, 0.0) } else { (0.0, d) }
                })
            }
        }

        impl MinRule for $t {
            #[inline]
            fn min_vjp(self, y: $t) -> ($t, impl FnOnce($t) -> ($t, $t)) {
                let first = self <= y;
                (if first { self } else { y }, #[inline(always)] move |d: $t| {
                    if first { (d, 0.0) } else { (0.0, d) }
                })
            }
        }
    )*};
}
param_rules!(f32, f64);
