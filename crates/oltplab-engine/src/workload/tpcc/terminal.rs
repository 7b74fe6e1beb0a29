//! A terminal (one connection): its fixed home warehouse and Stock-Level district, its shuffled
//! deck of transaction types (clause 5.2.4.2), the inputs of each transaction (clauses 2.4.1,
//! 2.5.1, 2.6.1, 2.7.1, 2.8.1) and its keying and think times (clause 5.2.5).

use std::time::Duration;

use crate::error::{EngineError, Result};
use crate::rand::Rng;

use super::load::{CUSTOMERS, DISTRICTS, ITEMS};
use super::random::{last_name, nurand, CRun};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxType {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl TxType {
    pub const ALL: [TxType; 5] =
        [TxType::NewOrder, TxType::Payment, TxType::OrderStatus, TxType::Delivery, TxType::StockLevel];

    pub fn label(self) -> &'static str {
        ["new_order", "payment", "order_status", "delivery", "stock_level"][self as usize]
    }

    /// Clause 5.2.5.2: the minimum keying time before the transaction.
    fn keying_s(self) -> f64 {
        [18.0, 3.0, 2.0, 2.0, 2.0][self as usize]
    }

    /// Clause 5.2.5.7: the mean think time after the response.
    fn think_mean_s(self) -> f64 {
        [12.0, 12.0, 10.0, 5.0, 5.0][self as usize]
    }
}

/// `--weights`: the mix in whole percent-like cards, 45,43,4,4,4 by default.
pub fn parse_weights(text: &str) -> Result<[u32; 5]> {
    let bad = || {
        EngineError::config(format!(
            "--weights must be five non-negative integers for new_order,payment,order_status,delivery,stock_level \
             (e.g. 45,43,4,4,4), got '{text}'"
        ))
    };
    let parts: Vec<u32> =
        text.split(',').map(|p| p.trim().parse::<u32>()).collect::<std::result::Result<_, _>>().map_err(|_| bad())?;
    let weights: [u32; 5] = parts.try_into().map_err(|_| bad())?;
    if weights.iter().sum::<u32>() == 0 || weights.iter().sum::<u32>() > 10_000 {
        return Err(bad());
    }
    Ok(weights)
}

/// The deck: `weights[i]` cards of each type, shuffled again whenever it runs out, so the mix is
/// exact over every full deck and random within it.
#[derive(Debug)]
pub struct Deck {
    cards: Vec<TxType>,
    next: usize,
}

impl Deck {
    pub fn new(weights: [u32; 5]) -> Self {
        let cards: Vec<TxType> =
            TxType::ALL.iter().zip(weights).flat_map(|(&t, n)| std::iter::repeat_n(t, n as usize)).collect();
        let next = cards.len();
        Self { cards, next }
    }

    pub fn draw(&mut self, rng: &mut Rng) -> TxType {
        if self.next >= self.cards.len() {
            for i in (1..self.cards.len()).rev() {
                self.cards.swap(i, rng.uniform(0, i as u32) as usize);
            }
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

/// Where a terminal lives for the whole run (clauses 2.x.1.1, 4.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Home {
    /// Table set (1-based).
    pub set: u32,
    pub w: u32,
    /// Stock-Level's district, distinct among the first ten terminals of a warehouse.
    pub d: u32,
}

impl Home {
    /// Terminals are dealt round-robin over table sets, then warehouses, then districts, so
    /// each warehouse gets ⌊n/W⌋ or ⌈n/W⌉ of them.
    pub fn of(terminal: usize, sets: u32, warehouses: u32) -> Self {
        let (sets, warehouses) = (sets as usize, warehouses as usize);
        let set = terminal % sets;
        let w = (terminal / sets) % warehouses;
        let d = (terminal / (sets * warehouses)) % DISTRICTS as usize;
        Self { set: set as u32 + 1, w: w as u32 + 1, d: d as u32 + 1 }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Customer {
    Id(u32),
    Last(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub i_id: u32,
    pub supply_w: u32,
    pub qty: u32,
}

/// One business transaction's inputs: kept when the transaction is retried after a deadlock
/// or serialization failure, so the retry is the same transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    NewOrder { d: u32, c_id: u32, lines: Vec<Line>, rollback: bool },
    Payment { d: u32, c_w: u32, c_d: u32, customer: Customer, amount_cents: i64 },
    OrderStatus { d: u32, customer: Customer },
    Delivery { carrier: u32 },
    StockLevel { threshold: u32 },
}

/// A warehouse other than `home` (uniform), or `home` when it is the only one.
fn other_warehouse(rng: &mut Rng, home: u32, warehouses: u32) -> u32 {
    if warehouses <= 1 {
        return home;
    }
    let o = rng.uniform(1, warehouses - 1);
    if o >= home {
        o + 1
    } else {
        o
    }
}

/// 60% by last name (`NURand` with the run's C), 40% by id (clauses 2.5.1.2, 2.6.1.2).
fn customer(rng: &mut Rng, c: &CRun) -> Customer {
    if rng.uniform(1, 100) <= 60 {
        Customer::Last(last_name(nurand(rng, 255, 0, 999, c.c_last)))
    } else {
        Customer::Id(nurand(rng, 1023, 1, CUSTOMERS, c.c_id))
    }
}

pub fn draw_input(ty: TxType, home: Home, warehouses: u32, c: &CRun, rng: &mut Rng) -> Input {
    match ty {
        TxType::NewOrder => {
            let d = rng.uniform(1, DISTRICTS);
            let c_id = nurand(rng, 1023, 1, CUSTOMERS, c.c_id);
            let ol_cnt = rng.uniform(5, 15);
            let rollback = rng.uniform(1, 100) == 1;
            let lines = (1..=ol_cnt)
                .map(|n| {
                    // The last line of a rolled-back order names an unused item (2.4.1.4).
                    let i_id = if rollback && n == ol_cnt { ITEMS + 1 } else { nurand(rng, 8191, 1, ITEMS, c.ol_i_id) };
                    let supply_w =
                        if rng.uniform(1, 100) == 1 { other_warehouse(rng, home.w, warehouses) } else { home.w };
                    Line { i_id, supply_w, qty: rng.uniform(1, 10) }
                })
                .collect();
            Input::NewOrder { d, c_id, lines, rollback }
        }
        TxType::Payment => {
            let d = rng.uniform(1, DISTRICTS);
            let (c_w, c_d) = if rng.uniform(1, 100) <= 85 {
                (home.w, d)
            } else {
                (other_warehouse(rng, home.w, warehouses), rng.uniform(1, DISTRICTS))
            };
            let customer = customer(rng, c);
            Input::Payment { d, c_w, c_d, customer, amount_cents: rng.uniform(100, 500_000).into() }
        }
        TxType::OrderStatus => {
            let d = rng.uniform(1, DISTRICTS);
            Input::OrderStatus { d, customer: customer(rng, c) }
        }
        TxType::Delivery => Input::Delivery { carrier: rng.uniform(1, 10) },
        TxType::StockLevel => Input::StockLevel { threshold: rng.uniform(10, 20) },
    }
}

/// Keying time before `ty` (fixed) plus the think time after the previous transaction:
/// `-ln(r) * mean`, cut at 10 × mean (clause 5.2.5.4).
pub fn keying(ty: TxType) -> Duration {
    Duration::from_secs_f64(ty.keying_s())
}

pub fn think(ty: TxType, rng: &mut Rng) -> Duration {
    let r = 1.0 - rng.uniform_f64(); // (0, 1]
    let mean = ty.think_mean_s();
    Duration::from_secs_f64((-r.ln() * mean).min(10.0 * mean))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deck_holds_the_mix_exactly() {
        let mut deck = Deck::new([45, 43, 4, 4, 4]);
        let mut rng = Rng::seeded(5);
        let mut n = [0u32; 5];
        for _ in 0..1000 {
            n[deck.draw(&mut rng) as usize] += 1;
        }
        assert_eq!(n, [450, 430, 40, 40, 40]);
    }

    #[test]
    fn terminals_spread_evenly_with_distinct_stock_level_districts() {
        let homes: Vec<Home> = (0..20).map(|i| Home::of(i, 1, 2)).collect();
        for w in 1..=2 {
            let mut ds: Vec<u32> = homes.iter().filter(|h| h.w == w).map(|h| h.d).collect();
            assert_eq!(ds.len(), 10);
            ds.sort_unstable();
            assert_eq!(ds, (1..=10).collect::<Vec<_>>());
        }
    }

    #[test]
    fn remote_and_by_name_rates_follow_the_spec() {
        let mut rng = Rng::seeded(9);
        let c = CRun::draw(&mut rng);
        let home = Home { set: 1, w: 2, d: 1 };
        let (mut lines, mut remote_lines, mut payments, mut remote_payments, mut by_name, mut rollbacks) =
            (0, 0, 0, 0, 0, 0);
        for _ in 0..50_000 {
            if let Input::NewOrder { lines: l, rollback, .. } = draw_input(TxType::NewOrder, home, 4, &c, &mut rng) {
                lines += l.len();
                remote_lines += l.iter().filter(|x| x.supply_w != 2).count();
                rollbacks += usize::from(rollback);
                assert!((5..=15).contains(&l.len()));
            }
            if let Input::Payment { c_w, customer, .. } = draw_input(TxType::Payment, home, 4, &c, &mut rng) {
                payments += 1;
                remote_payments += usize::from(c_w != 2);
                by_name += usize::from(matches!(customer, Customer::Last(_)));
            }
        }
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b as f64;
        assert!((0.9..1.1).contains(&pct(remote_lines, lines)), "{}", pct(remote_lines, lines));
        assert!((14.4..15.6).contains(&pct(remote_payments, payments)));
        assert!((59.2..60.8).contains(&pct(by_name, payments)));
        assert!((0.85..1.15).contains(&pct(rollbacks, 50_000)));
        // A single warehouse never leaves home.
        for _ in 0..1000 {
            if let Input::Payment { c_w, .. } =
                draw_input(TxType::Payment, Home { set: 1, w: 1, d: 1 }, 1, &c, &mut rng)
            {
                assert_eq!(c_w, 1);
            }
        }
    }

    #[test]
    fn think_times_have_the_spec_mean_and_cap() {
        let mut rng = Rng::seeded(1);
        let n = 100_000;
        let total: f64 = (0..n).map(|_| think(TxType::Delivery, &mut rng).as_secs_f64()).sum();
        assert!((4.85..5.15).contains(&(total / f64::from(n))));
        assert!((0..n).all(|_| think(TxType::Delivery, &mut rng).as_secs_f64() <= 50.0));
    }

    #[test]
    fn bad_weights_are_refused() {
        assert_eq!(parse_weights("45,43,4,4,4").unwrap(), [45, 43, 4, 4, 4]);
        assert!(parse_weights("45,43,4,4").is_err());
        assert!(parse_weights("a,b,c,d,e").is_err());
        assert!(parse_weights("0,0,0,0,0").is_err());
    }
}
