//! Lua errors as one line that names the script's file and line, as sysbench prints them.

/// The error's message, prefixed with the script's `file:line` when the message lacks a position
/// (an error raised by the engine inside a call from the script).
pub fn one_line(e: &mlua::Error) -> String {
    let (message, traceback) = innermost(e, None);
    // LuaJIT appends the stack to an error raised from a coroutine; the first line says it all.
    let message = message.split("stack traceback:").next().unwrap_or_default();
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if is_value_address(&message) {
        // An error value that is not a string (`error({})`): sysbench's C reads it with
        // lua_tostring, which gives NULL, and prints this.
        return "(not a string)".to_owned();
    }
    match traceback.as_deref().and_then(script_frame) {
        Some(at) if !has_position(&message) => format!("{at}: {message}"),
        _ => message,
    }
}

/// The deepest cause's message and the outermost traceback seen on the way down.
fn innermost(e: &mlua::Error, traceback: Option<&str>) -> (String, Option<String>) {
    match e {
        mlua::Error::CallbackError { traceback: tb, cause } => innermost(cause, traceback.or(Some(tb))),
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => {
            (m.clone(), traceback.map(str::to_owned))
        }
        mlua::Error::WithContext { cause, .. } => innermost(cause, traceback),
        other => (other.to_string(), traceback.map(str::to_owned)),
    }
}

/// `path:line` of the first frame in the traceback that is the script's (not C, not oltplab's).
fn script_frame(traceback: &str) -> Option<String> {
    traceback.lines().skip(1).map(str::trim).find_map(|line| {
        let (at, _) = line.split_once(": ")?;
        let (path, lineno) = at.rsplit_once(':')?;
        let ours = path.starts_with('[') || path.contains("[oltplab]") || path.contains("__mlua");
        (!ours && !lineno.is_empty() && lineno.bytes().all(|b| b.is_ascii_digit())).then(|| at.to_owned())
    })
}

/// Whether a message is what Lua's tostring makes of a table, function, userdata or coroutine
/// (`table: 0x55d0c8a1b2c0`): mlua's text for an error value that is none of string or number.
fn is_value_address(message: &str) -> bool {
    let Some((kind, address)) = message.split_once(": 0x") else { return false };
    ["table", "function", "userdata", "thread"].contains(&kind)
        && !address.is_empty()
        && address.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether a message starts with `something:123:`.
fn has_position(message: &str) -> bool {
    let mut parts = message.splitn(3, ':');
    let (Some(path), Some(line), Some(_)) = (parts.next(), parts.next(), parts.next()) else { return false };
    !path.is_empty() && !path.contains(' ') && !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_with_a_position_is_kept() {
        assert!(has_position("./x.lua:3: attempt to index local 'x' (a nil value)"));
        assert!(!has_position("SQL error, errno = 1146"));
        assert!(!has_position("cannot bind a table: to this"));
    }

    #[test]
    fn an_error_value_that_is_not_a_string_reads_as_in_sysbench() {
        assert!(is_value_address("table: 0x7f5480034b60"));
        assert!(!is_value_address("table: 0x7f54 is odd"));
        assert!(!is_value_address("./x.lua:3: table: 0xzz"));
        let e = mlua::Error::RuntimeError("table: 0x7f5480034b60".into());
        assert_eq!(one_line(&e), "(not a string)");
    }

    #[test]
    fn the_first_frame_of_the_script_is_found() {
        let tb = "stack traceback:\n\t[C]: in function 'set'\n\t[oltplab]:12: in function 'x'\n\t./k.lua:7: in function 'event'";
        assert_eq!(script_frame(tb).as_deref(), Some("./k.lua:7"));
    }
}
