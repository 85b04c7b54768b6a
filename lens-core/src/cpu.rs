//! Which instruction sets this CPU has: asked at run time with `std`, read from the build's
//! target features without it (a `no_std` build has no way to ask; build it with
//! `-C target-feature=+avx2,+fma` or `-C target-cpu=native` for the wide paths).
//!
//! Either way `true` means the CPU running the code has the feature, which is what the
//! `unsafe` calls of `#[target_feature]` functions it guards rely on: a build that requires
//! a feature runs only on CPUs that have it.

/// `true` when the CPU has the x86 feature named by the literal (`"avx2"`, `"popcnt"`).
#[cfg(feature = "std")]
#[doc(hidden)]
#[macro_export]
macro_rules! __cpu_has {
    ($feature:tt) => {
        $crate::__private::std::arch::is_x86_feature_detected!($feature)
    };
}

/// `true` when the build targets the x86 feature named by the literal (see the `std` version).
#[cfg(not(feature = "std"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __cpu_has {
    ($feature:tt) => {
        $crate::__built_with(cfg!(target_feature = $feature))
    };
}

/// The answer of `__cpu_has!` without `std`: a constant, passed through a function so that
/// `avx2 && fma` does not read as a constant expression (which lints would flag) where it is
/// one only in this configuration.
#[doc(hidden)]
#[inline(always)]
#[must_use]
pub const fn __built_with(feature: bool) -> bool {
    feature
}

#[cfg(test)]
mod tests {
    /// SSE2 is part of x86-64 itself: every build and every CPU has it, both ways of asking.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_baseline_is_always_there() {
        assert!(crate::__cpu_has!("sse2"));
        assert!(crate::__built_with(cfg!(target_feature = "sse2")));
    }
}
