//! The `principal_subspace` example's claim: Riemannian gradient ascent on the Stiefel
//! manifold finds the digits' leading five principal directions, within 1e-4 rad (largest
//! principal angle) of nalgebra's symmetric eigendecomposition.

#[allow(dead_code)]
#[path = "../examples/principal_subspace.rs"]
mod principal_subspace;

#[test]
fn learned_frame_spans_the_principal_subspace() {
    let r = principal_subspace::run(100_000);
    assert!(
        r.largest_angle < 1e-4,
        "largest principal angle {}",
        r.largest_angle
    );
    let (got, best) = r.captured;
    assert!(
        (got - best).abs() <= 1e-9 * best,
        "captured {got} of {best}"
    );
}
