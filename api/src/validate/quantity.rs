//! `resource.Quantity`: parsing, exact comparison, and the canonical form
//! upstream prints (`String()`), e.g. "1000m" → "1", "1024Mi" → "1Gi".
//! No maintained crate parses Kubernetes quantities exactly (k8s-openapi's
//! `Quantity` is a bare string), so this small parser is kept here.

use thiserror::Error;

/// The regular expression upstream quotes when a quantity does not parse.
pub const QUANTITY_FORMAT_MSG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    DecimalSI,
    BinarySI,
    DecimalExponent,
}

/// A quantity held exactly, in units of 10^-9, with the format its suffix
/// chose. Values below 1n round up, as upstream's do.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    nanos: i128,
    format: Format,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum QuantityError {
    #[error("{QUANTITY_FORMAT_MSG}")]
    Format,
    #[error("quantity is too large")]
    TooLarge,
}

const NANOS_PER_UNIT: i128 = 1_000_000_000;

impl Quantity {
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        let text = text.trim();
        let (negative, body) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let number_len = body
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(body.len());
        let (number, suffix) = body.split_at(number_len);
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(QuantityError::Format);
        }
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let (format, base2, base10) = parse_suffix(suffix)?;
        // digits * 10^(base10 - fraction_len) * 2^base2, scaled to nanos.
        let digits: String = format!("{whole}{fraction}");
        let digits = digits.trim_start_matches('0');
        let mantissa: i128 = if digits.is_empty() {
            0
        } else if digits.len() > 36 {
            return Err(QuantityError::TooLarge);
        } else {
            digits.parse().map_err(|_| QuantityError::Format)?
        };
        let exp10 = base10 - fraction.len() as i32 + 9;
        let mut value = mantissa;
        for _ in 0..base2 {
            value = value.checked_mul(2).ok_or(QuantityError::TooLarge)?;
        }
        if exp10 >= 0 {
            for _ in 0..exp10 {
                value = value.checked_mul(10).ok_or(QuantityError::TooLarge)?;
            }
        } else {
            let divisor = 10_i128
                .checked_pow((-exp10) as u32)
                .ok_or(QuantityError::TooLarge)?;
            // Round up (away from zero), as upstream keeps at most nano precision.
            value = (value + divisor - 1) / divisor;
        }
        Ok(Self {
            nanos: if negative { -value } else { value },
            format,
        })
    }

    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// Whether the value is a whole number (upstream's MilliValue()%1000 == 0).
    pub fn is_integer(&self) -> bool {
        self.nanos % NANOS_PER_UNIT == 0
    }

    /// The integer value, rounded up (upstream's Value()).
    pub fn value(&self) -> i128 {
        let whole = self.nanos.div_euclid(NANOS_PER_UNIT);
        if self.nanos.rem_euclid(NANOS_PER_UNIT) == 0 {
            whole
        } else {
            whole + 1
        }
    }

    /// The amount as a float (upstream's ratios divide milli-values).
    pub fn as_f64(&self) -> f64 {
        self.nanos as f64 / NANOS_PER_UNIT as f64
    }

    /// A whole number of units, as a count (`pods: "3"`).
    pub fn count(units: i64) -> Self {
        Quantity {
            nanos: i128::from(units) * NANOS_PER_UNIT,
            format: Format::DecimalSI,
        }
    }

    /// Upstream's canonical String().
    pub fn canonical(&self) -> String {
        if self.nanos == 0 {
            return "0".to_string();
        }
        let sign = if self.nanos < 0 { "-" } else { "" };
        let magnitude = self.nanos.abs();
        if self.format == Format::BinarySI
            && magnitude >= 1024 * NANOS_PER_UNIT
            && magnitude % NANOS_PER_UNIT == 0
        {
            let mut units = magnitude / NANOS_PER_UNIT;
            let mut step = 0;
            while step < 6 && units % 1024 == 0 {
                units /= 1024;
                step += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][step];
            return format!("{sign}{units}{suffix}");
        }
        // Decimal: the largest exponent (a multiple of 3, -9..=18) that keeps
        // the mantissa whole.
        let mut mantissa = magnitude;
        let mut exponent = -9;
        while exponent < 18 && mantissa % 1000 == 0 {
            mantissa /= 1000;
            exponent += 3;
        }
        let suffix = if self.format == Format::DecimalExponent {
            if exponent == 0 {
                String::new()
            } else {
                format!("e{exponent}")
            }
        } else {
            match exponent {
                -9 => "n",
                -6 => "u",
                -3 => "m",
                3 => "k",
                6 => "M",
                9 => "G",
                12 => "T",
                15 => "P",
                18 => "E",
                _ => "",
            }
            .to_string()
        };
        format!("{sign}{mantissa}{suffix}")
    }
}

/// Upstream's Add: the format stays the left side's, unless it is zero.
impl std::ops::Add for Quantity {
    type Output = Quantity;

    fn add(self, other: Quantity) -> Quantity {
        Quantity {
            nanos: self.nanos.saturating_add(other.nanos),
            format: if self.nanos == 0 {
                other.format
            } else {
                self.format
            },
        }
    }
}

/// Upstream's Sub, formatted as Add.
impl std::ops::Sub for Quantity {
    type Output = Quantity;

    fn sub(self, other: Quantity) -> Quantity {
        Quantity {
            nanos: self.nanos.saturating_sub(other.nanos),
            format: if self.nanos == 0 {
                other.format
            } else {
                self.format
            },
        }
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.nanos.cmp(&other.nanos))
    }
}

/// (format, power of two, power of ten) of a suffix.
fn parse_suffix(suffix: &str) -> Result<(Format, u32, i32), QuantityError> {
    let decimal = |e: i32| Ok((Format::DecimalSI, 0, e));
    let binary = |p: u32| Ok((Format::BinarySI, p, 0));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let rest = suffix
                .strip_prefix('e')
                .or_else(|| suffix.strip_prefix('E'))
                .ok_or(QuantityError::Format)?;
            let exponent: i32 = rest.parse().map_err(|_| QuantityError::Format)?;
            if !(-100..=100).contains(&exponent) {
                return Err(QuantityError::TooLarge);
            }
            Ok((Format::DecimalExponent, 0, exponent))
        }
    }
}

/// A quantity from its JSON form (a string, or a bare number).
pub fn from_json(value: &serde_json::Value) -> Result<Quantity, QuantityError> {
    match value {
        serde_json::Value::String(s) => Quantity::parse(s),
        serde_json::Value::Number(n) => Quantity::parse(&n.to_string()),
        _ => Err(QuantityError::Format),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        Quantity::parse(s).unwrap().canonical()
    }

    #[test]
    fn canonical_forms_match_upstream() {
        assert_eq!(canon("1000m"), "1");
        assert_eq!(canon("0.5"), "500m");
        assert_eq!(canon("1500m"), "1500m");
        assert_eq!(canon("1024Mi"), "1Gi");
        assert_eq!(canon("1536Mi"), "1536Mi");
        assert_eq!(canon("512"), "512");
        assert_eq!(canon("1000"), "1k");
        assert_eq!(canon("128974848"), "128974848");
        assert_eq!(canon("129e6"), "129e6");
        assert_eq!(canon("0"), "0");
        assert_eq!(canon("-1"), "-1");
        assert_eq!(canon("100Ki"), "100Ki");
    }

    #[test]
    fn sums_keep_the_first_nonzero_format() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        assert_eq!((q("1Gi") + q("512Mi")).canonical(), "1536Mi");
        assert_eq!((q("1500m") + q("500m")).canonical(), "2");
        assert_eq!((Quantity::count(0) + q("1Gi")).canonical(), "1Gi");
        assert_eq!((q("2") - q("500m")).canonical(), "1500m");
        assert_eq!(Quantity::count(3).canonical(), "3");
    }

    #[test]
    fn comparison_is_exact() {
        let a = Quantity::parse("1Gi").unwrap();
        let b = Quantity::parse("1073741824").unwrap();
        assert_eq!(a.partial_cmp(&b), Some(std::cmp::Ordering::Equal));
        assert!(Quantity::parse("0.1").unwrap() == Quantity::parse("100m").unwrap());
        assert!(Quantity::parse("2").unwrap() > Quantity::parse("1500m").unwrap());
    }

    #[test]
    fn malformed_quantities_fail() {
        for bad in ["", "abc", "1..2", "1Qi", "1e", "."] {
            assert_eq!(Quantity::parse(bad), Err(QuantityError::Format), "{bad}");
        }
    }
}
