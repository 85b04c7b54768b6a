//! Semi-supervised node classification on Zachary's karate club with a two-layer graph
//! convolutional network (Kipf and Welling), built from graph-convolution spans: the
//! normalised adjacency `D^-1/2 (A + I) D^-1/2` is the span's measure. One labelled member
//! per faction (the instructor, node 0, and the administrator, node 33); the other 32
//! members are classified.
//!
//! The graph: W. W. Zachary, "An information flow model for conflict and fission in small
//! groups", Journal of Anthropological Research 33 (1977), 452-473; 34 members, 78
//! friendships, and the faction each member joined after the split.
//!
//! ```text
//! cargo run --release --example graph_conv
//! ```

use clap::Parser;
use paralens::prelude::*;
use paralens::span::{SpanLayer, instances};
use paralens::{LabelError, Loss};

/// The 78 friendships.
pub const EDGES: [(usize, usize); 78] = [
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (0, 5),
    (0, 6),
    (0, 7),
    (0, 8),
    (0, 10),
    (0, 11),
    (0, 12),
    (0, 13),
    (0, 17),
    (0, 19),
    (0, 21),
    (0, 31),
    (1, 2),
    (1, 3),
    (1, 7),
    (1, 13),
    (1, 17),
    (1, 19),
    (1, 21),
    (1, 30),
    (2, 3),
    (2, 7),
    (2, 8),
    (2, 9),
    (2, 13),
    (2, 27),
    (2, 28),
    (2, 32),
    (3, 7),
    (3, 12),
    (3, 13),
    (4, 6),
    (4, 10),
    (5, 6),
    (5, 10),
    (5, 16),
    (6, 16),
    (8, 30),
    (8, 32),
    (8, 33),
    (9, 33),
    (13, 33),
    (14, 32),
    (14, 33),
    (15, 32),
    (15, 33),
    (18, 32),
    (18, 33),
    (19, 33),
    (20, 32),
    (20, 33),
    (22, 32),
    (22, 33),
    (23, 25),
    (23, 27),
    (23, 29),
    (23, 32),
    (23, 33),
    (24, 25),
    (24, 27),
    (24, 31),
    (25, 31),
    (26, 29),
    (26, 33),
    (27, 33),
    (28, 31),
    (28, 33),
    (29, 32),
    (29, 33),
    (30, 32),
    (30, 33),
    (31, 32),
    (31, 33),
    (32, 33),
];

/// The members who followed the instructor (faction 0); the others followed the
/// administrator (faction 1).
pub const INSTRUCTOR: [usize; 17] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 16, 17, 19, 21];

const NODES: usize = 34;
const HIDDEN: usize = 16;

para! {
    /// Two graph convolutions: one-hot node features -> 16 hidden -> 2 faction scores.
    #[derive(Clone, Debug)]
    pub struct Gcn {
        g1: SpanLayer<f32, 1156, 544, 544>,
        g2: SpanLayer<f32, 544, 68, 32>,
    }
    fn forward(&self, x: SVector<f32, 1156>) -> SVector<f32, 68> {
        self.g2(relu(self.g1(x)))
    }
}

/// Softmax cross-entropy over the two faction scores of the labelled nodes only.
#[derive(Clone, Debug)]
pub struct LabelledNodes(pub Vec<(usize, usize)>);

impl Loss<SVector<f32, 68>> for LabelledNodes {
    type Label = ();
    type Scalar = f32;

    fn check_label(&self, (): &()) -> Result<(), LabelError> {
        match self.0.iter().find(|&&(n, c)| n >= NODES || c >= 2) {
            Some(&(n, c)) => Err(LabelError::OutOfRange {
                label: if n >= NODES { n } else { c },
                classes: if n >= NODES { NODES } else { 2 },
            }),
            None => Ok(()),
        }
    }

    fn vjp(&self, y: SVector<f32, 68>, (): &()) -> (f32, impl FnOnce(f32) -> SVector<f32, 68>) {
        let scores = |n: usize| SVector::<f32, 2>::new(y[2 * n], y[2 * n + 1]);
        let mut loss = 0.0;
        let mut grad = SVector::<f32, 68>::zeros();
        for &(n, c) in &self.0 {
            let (l, pull) = SoftmaxCrossEntropy.vjp(scores(n), &c);
            loss += l;
            let g = pull(1.0);
            grad[2 * n] += g[0];
            grad[2 * n + 1] += g[1];
        }
        (loss, move |dl: f32| grad * dl)
    }
}

/// Trains for `epochs` full-graph steps; returns the accuracy on the 32 unlabelled members.
pub fn run(epochs: usize, seed: u64, verbose: bool) -> f64 {
    let model = Gcn {
        g1: SpanLayer::new(&instances::graph_conv(NODES, &EDGES, NODES, HIDDEN)),
        g2: SpanLayer::new(&instances::graph_conv(NODES, &EDGES, HIDDEN, 2)),
    };
    let params = model.init(seed);
    let loss = LabelledNodes(vec![(0, 0), (33, 1)]);
    let mut learner = Learner::new(model, params, loss, Adam::new(0.01));
    let x = SVector::<f32, 1156>::from_fn(|i, _| if i / NODES == i % NODES { 1.0 } else { 0.0 });
    let faction = |n: usize| usize::from(!INSTRUCTOR.contains(&n));
    let accuracy = |l: &Learner<Gcn, SVector<f32, 1156>, LabelledNodes, Adam<f32>>| {
        let y = l.predict(&x);
        let hits = (1..33)
            .filter(|&n| usize::from(y[2 * n + 1] > y[2 * n]) == faction(n))
            .count();
        hits as f64 / 32.0
    };
    for epoch in 1..=epochs {
        let l = learner.step(&x, &());
        if verbose && (epoch % 20 == 0 || epoch == 1) {
            println!(
                "epoch {epoch:3}  loss {l:.4}  accuracy on the other 32 members {:.3}",
                accuracy(&learner)
            );
        }
    }
    accuracy(&learner)
}

/// Semi-supervised node classification on Zachary's karate club with a two-layer graph
/// convolutional network built from graph-convolution spans: one labelled member per faction,
/// the other 32 classified.
// No options: the parser is there for --help and --version, and to refuse any argument.
#[derive(Parser, Debug)]
#[command(name = "graph_conv", version)]
struct Args {}

fn main() {
    Args::parse();
    println!("karate club: 34 members, 78 friendships, one labelled member per faction");
    let acc = run(200, 0, true);
    println!(
        "final accuracy on the 32 unlabelled members: {acc:.3} ({} of 32)",
        (acc * 32.0).round()
    );
}
