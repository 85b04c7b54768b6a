//! Fisher's Iris data, shipped with the crate (see `lens-core/data/README.md` for its source).

use super::DataError;

/// The Iris CSV as shipped: a header and 150 rows of four measurements (cm) and a species.
pub const IRIS_CSV: &str = include_str!("../../data/iris.csv");

/// The species, in label order.
pub const IRIS_CLASSES: [&str; 3] = ["setosa", "versicolor", "virginica"];

/// The Iris data: measurements and class labels (indices into [`IRIS_CLASSES`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Iris {
    /// Sepal length, sepal width, petal length, petal width (cm).
    pub features: Vec<[f64; 4]>,
    /// Class of each row, `0..3`.
    pub labels: Vec<usize>,
}

/// The shipped Iris data set.
///
/// ```
/// let iris = paralens::data::iris();
/// assert_eq!(iris.features.len(), 150);
/// assert_eq!(iris.features[0], [5.1, 3.5, 1.4, 0.2]);
/// assert_eq!(iris.labels[149], 2);
/// ```
#[must_use]
pub fn iris() -> Iris {
    parse_iris(IRIS_CSV).expect("the shipped iris.csv is valid (checked by tests)")
}

/// Iris as the UCI Machine Learning Repository's `iris.data` has it: the shipped (Fisher's,
/// scikit-learn's) data with UCI's two known transcription errors put back. UCI's sample 35
/// has petal width 0.1 (Fisher: 0.2) and its sample 38 reads `4.9, 3.1, 1.5, 0.1` (Fisher:
/// `4.9, 3.6, 1.4, 0.1`); both errors are listed on the UCI page. Published experiments that
/// read `iris.data` ran on this version, so reproducing their figures exactly needs it.
///
/// ```
/// let (fisher, uci) = (paralens::data::iris(), paralens::data::iris_uci());
/// assert_eq!(uci.features[37], [4.9, 3.1, 1.5, 0.1]);
/// let differing = (0..150).filter(|&i| fisher.features[i] != uci.features[i]).count();
/// assert_eq!(differing, 2);
/// ```
#[must_use]
pub fn iris_uci() -> Iris {
    let mut data = iris();
    data.features[34] = [4.9, 3.1, 1.5, 0.1];
    data.features[37] = [4.9, 3.1, 1.5, 0.1];
    data
}

/// Parses Iris in the shipped format: header
/// `sepal_length,sepal_width,petal_length,petal_width,species`, then one row per flower.
///
/// # Errors
/// A missing or different header, a row without five fields, a measurement that is not a
/// finite number, or an unknown species, each with its line number.
pub fn parse_iris(text: &str) -> Result<Iris, DataError> {
    const SRC: &str = "iris.csv";
    const HEADER: &str = "sepal_length,sepal_width,petal_length,petal_width,species";
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim() == HEADER => {}
        Some((_, h)) => {
            return Err(DataError::at(
                SRC,
                1,
                format!("expected the header `{HEADER}`, found `{h}`"),
            ));
        }
        None => return Err(DataError::whole(SRC, "the file is empty")),
    }
    let mut data = Iris {
        features: Vec::new(),
        labels: Vec::new(),
    };
    for (i, line) in lines {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [a, b, c, d, species] = fields[..] else {
            return Err(DataError::at(
                SRC,
                n,
                format!("expected 5 comma-separated fields, found {}", fields.len()),
            ));
        };
        let mut row = [0.0; 4];
        for (slot, field) in row.iter_mut().zip([a, b, c, d]) {
            *slot = field
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    DataError::at(SRC, n, format!("`{field}` is not a finite number"))
                })?;
        }
        let label = IRIS_CLASSES
            .iter()
            .position(|s| *s == species)
            .ok_or_else(|| {
                DataError::at(
                    SRC,
                    n,
                    format!("unknown species `{species}` (expected one of {IRIS_CLASSES:?})"),
                )
            })?;
        data.features.push(row);
        data.labels.push(label);
    }
    if data.labels.is_empty() {
        return Err(DataError::whole(SRC, "no data rows after the header"));
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_file_has_fishers_150_rows_with_known_means() {
        let d = iris();
        assert_eq!(d.labels.len(), 150);
        for c in 0..3 {
            assert_eq!(d.labels.iter().filter(|&&l| l == c).count(), 50);
        }
        let means: Vec<f64> = (0..4)
            .map(|j| d.features.iter().map(|r| r[j]).sum::<f64>() / 150.0)
            .collect();
        for (m, want) in means.iter().zip([5.843, 3.057, 3.758, 1.199]) {
            assert!((m - want).abs() < 5e-4, "{m} vs {want}");
        }
        // scikit-learn's (Fisher's) sample 35, which UCI has wrong.
        assert_eq!(d.features[34], [4.9, 3.1, 1.5, 0.2]);
    }

    #[test]
    fn malformed_rows_are_reported_with_their_line() {
        let head = "sepal_length,sepal_width,petal_length,petal_width,species\n";
        let e = parse_iris(&format!("{head}5.1,3.5,1.4,0.2,setosa\n1,2,x,4,setosa\n")).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().contains("`x` is not a finite number"), "{e}");
        let e = parse_iris(&format!("{head}1,2,3,4,rose\n")).unwrap_err();
        assert!(e.to_string().contains("unknown species `rose`"), "{e}");
        let e = parse_iris(&format!("{head}1,2,3\n")).unwrap_err();
        assert!(e.to_string().contains("expected 5"), "{e}");
        let e = parse_iris("a,b\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(parse_iris("").is_err());
        assert!(parse_iris(head).is_err());
        assert!(parse_iris(&format!("{head}NaN,1,1,1,setosa\n")).is_err());
    }
}
