//! sysbench's string templates (`sysbench.rand.string`): `#` becomes a digit,
//! `@` a lower-case letter, anything else is copied.

use super::Rng;

/// The `c` column: 10 groups of 11 digits, 119 characters in a CHAR(120).
pub const C_TEMPLATE: &str = concat!(
    "###########-###########-###########-###########-###########-",
    "###########-###########-###########-###########-###########"
);

/// The `pad` column: 5 groups of 11 digits, 59 characters in a CHAR(60).
pub const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

/// Fills `template` with uniform digits and letters, as `sb_rand_str`.
pub fn rand_string(rng: &mut Rng, template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    rand_string_into(rng, template, &mut out);
    out
}

/// [`rand_string`] appending to a reused buffer (the prepare loop makes millions).
pub fn rand_string_into(rng: &mut Rng, template: &str, out: &mut String) {
    for ch in template.chars() {
        out.push(match ch {
            '#' => char::from(rng.uniform(u32::from(b'0'), u32::from(b'9')) as u8),
            '@' => char::from(rng.uniform(u32::from(b'a'), u32::from(b'z')) as u8),
            other => other,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_have_sysbench_lengths() {
        assert_eq!(C_TEMPLATE.len(), 119);
        assert_eq!(PAD_TEMPLATE.len(), 59);
        assert_eq!(C_TEMPLATE.split('-').count(), 10);
        assert_eq!(PAD_TEMPLATE.split('-').count(), 5);
    }

    #[test]
    fn placeholders_are_filled_and_the_rest_copied() {
        let mut rng = Rng::seeded(9);
        let s = rand_string(&mut rng, "#@-x#");
        let b = s.as_bytes();
        assert_eq!(s.len(), 5);
        assert!(b[0].is_ascii_digit() && b[4].is_ascii_digit());
        assert!(b[1].is_ascii_lowercase());
        assert_eq!(&s[2..4], "-x");
        let c = rand_string(&mut rng, C_TEMPLATE);
        assert!(c.split('-').all(|g| g.len() == 11 && g.bytes().all(|d| d.is_ascii_digit())));
        // Every digit and letter shows up: the ends of the ranges are reachable.
        let many = rand_string(&mut rng, &"#@".repeat(2000));
        for ch in ('0'..='9').chain('a'..='z') {
            assert!(many.contains(ch), "{ch} never drawn");
        }
    }
}
