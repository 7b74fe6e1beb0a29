//! A prepared statement's result columns, for a MariaDB server that sends them only when they
//! change (`MARIADB_CLIENT_CACHE_METADATA`, which libmariadb, sysbench's client, asks for): the
//! prepare's reply carries them, and an execution's result then says "unchanged" in one byte
//! instead of a column definition packet per column. Only rows a caller keeps need them
//! (TPC-C, scripts), so they are kept as the prepare sent them and decoded at the first such use.

use std::sync::{Arc, OnceLock};

use mysql_common::io::ParseBuf;
use mysql_common::packets::Column;

use super::errors::Error;

/// Column definition packets, each after its length (u32, little-endian), and their decoding.
#[derive(Default, Clone)]
pub struct ColumnDefs {
    raw: Vec<u8>,
    decoded: OnceLock<Arc<[Column]>>,
}

impl ColumnDefs {
    /// One more column's definition packet (its payload).
    pub fn push(&mut self, packet: &[u8]) {
        self.raw.extend_from_slice(&(packet.len() as u32).to_le_bytes());
        self.raw.extend_from_slice(packet);
    }

    /// The columns, decoded at the first call.
    pub fn decoded(&self) -> Result<Arc<[Column]>, Error> {
        if let Some(columns) = self.decoded.get() {
            return Ok(Arc::clone(columns));
        }
        let columns = decode(&self.raw)?;
        Ok(Arc::clone(self.decoded.get_or_init(|| columns)))
    }
}

/// The same definitions, as the server sent them.
impl PartialEq for ColumnDefs {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

fn decode(mut raw: &[u8]) -> Result<Arc<[Column]>, Error> {
    let mut columns = Vec::new();
    while let Some((len, rest)) = raw.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        let packet = rest.get(..len).ok_or_else(|| Error::Protocol("a cut column definition".into()))?;
        let column = ParseBuf(packet)
            .parse::<Column>(())
            .map_err(|e| Error::Protocol(format!("cannot read a column definition: {e}")))?;
        columns.push(column);
        raw = &rest[len..];
    }
    Ok(columns.into())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A column definition (protocol 4.1) of an integer column named `name`.
    pub fn column(name: &str) -> Vec<u8> {
        let mut p = Vec::new();
        for s in ["def", "sb", "sbtest1", "sbtest1", name, name] {
            p.push(s.len() as u8);
            p.extend_from_slice(s.as_bytes());
        }
        p.extend_from_slice(&[0x0C, 0x3F, 0, 11, 0, 0, 0, 0x03, 0, 0, 0, 0, 0]);
        p
    }

    #[test]
    fn definitions_are_decoded_once_in_the_order_they_came() {
        assert!(ColumnDefs::default().decoded().unwrap().is_empty());
        let mut defs = ColumnDefs::default();
        defs.push(&column("id"));
        defs.push(&column("k"));
        let columns = defs.decoded().unwrap();
        let names: Vec<_> = columns.iter().map(|c| c.name_str().into_owned()).collect();
        assert_eq!(names, ["id", "k"]);
        assert!(Arc::ptr_eq(&columns, &defs.decoded().unwrap()));
        let mut other = ColumnDefs::default();
        other.push(&column("id"));
        assert!(defs != other && defs == defs.clone());
    }

    #[test]
    fn a_cut_definition_is_a_protocol_error() {
        let mut defs = ColumnDefs::default();
        defs.push(&column("id")[..5]);
        assert!(matches!(defs.decoded(), Err(Error::Protocol(_))));
        let defs = ColumnDefs { raw: vec![9, 0, 0, 0, 1], decoded: OnceLock::new() };
        assert!(matches!(defs.decoded(), Err(Error::Protocol(_))));
    }
}
