//! The panic hook: one `error` event with the message, where it happened and, when `RUST_BACKTRACE`
//! asks for one, the backtrace as a field. The default hook writes plain text to stderr, which breaks
//! a JSON log into lines no collector can parse.

use switchboard_actors::panic_text::loggable_message;

pub(crate) fn log_panic(info: &std::panic::PanicHookInfo<'_>) {
    let message = loggable_message(info.payload());
    let location = info
        .location()
        .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
        .unwrap_or_default();
    let thread = std::thread::current();
    let thread = thread.name().unwrap_or("unnamed");
    let backtrace = std::backtrace::Backtrace::capture();
    // Recorded only when `RUST_BACKTRACE` asked for one.
    let backtrace = (backtrace.status() == std::backtrace::BacktraceStatus::Captured)
        .then(|| without_type_arguments(&backtrace.to_string()));
    tracing::error!(
        panic.message = %message,
        panic.location = %location,
        thread,
        backtrace = backtrace.as_deref(),
        "a thread panicked"
    );
}

/// The backtrace's text with the type arguments of each frame's name left out:
/// `{async_block#2}<actix_web::app_service::AppRouting, ...>` becomes `{async_block#2}`. Frames that
/// debug info names spell out every generic argument of an async handler's stack, which made one
/// panic's line 400 KB: past what log shippers take, and nothing an operator reads. File and line stay.
/// A `<` that opens a qualified path (`<T as Trait>::f`, at the start or after `::`) is kept.
fn without_type_arguments(backtrace: &str) -> String {
    let mut out = String::with_capacity(backtrace.len().min(64 * 1024));
    let mut depth = 0usize;
    let mut previous = ' ';
    for c in backtrace.chars() {
        match c {
            '<' if depth > 0 => depth += 1,
            '<' if previous.is_alphanumeric() || matches!(previous, '_' | '}' | '>') => depth = 1,
            '>' if depth > 0 && previous != '-' => depth -= 1,
            '\n' => {
                depth = 0;
                out.push(c);
            }
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        previous = c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{loggable_message, without_type_arguments};

    #[test]
    fn a_literal_message_is_logged_and_a_formatted_one_only_measured() {
        let literal: Box<dyn std::any::Any + Send> = Box::new("fault injection: handler panic");
        assert_eq!(
            loggable_message(&*literal),
            "fault injection: handler panic"
        );
        // What slicing "Zoë" at byte 3 panics with: it quotes the string.
        let formatted: Box<dyn std::any::Any + Send> = Box::new(String::from(
            "byte index 3 is not a char boundary; it is inside 'ë' (bytes 2..4) of `Zoë`",
        ));
        let logged = loggable_message(&*formatted);
        assert!(!logged.contains("Zoë"), "{logged}");
        assert!(logged.contains("77 bytes"), "{logged}");
        let other: Box<dyn std::any::Any + Send> = Box::new(7_u32);
        assert_eq!(loggable_message(&*other), "(a panic without a message)");
    }

    #[test]
    fn type_arguments_go_and_qualified_paths_file_and_line_stay() {
        let frame = "   3: {async_block#2}<actix_service::apply::Apply<A, fn(B, &C) -> D<E>>, F>\n             at ./src/http_metrics.rs:41:33\n   4: <alloc::boxed::Box<dyn FnOnce()> as core::ops::function::FnOnce<()>>::call_once\n   5: tokio::task::local::LocalSet::with::{{closure}}";
        assert_eq!(
            without_type_arguments(frame),
            "   3: {async_block#2}\n             at ./src/http_metrics.rs:41:33\n   4: <alloc::boxed::Box as core::ops::function::FnOnce>::call_once\n   5: tokio::task::local::LocalSet::with::{{closure}}"
        );
    }

    #[test]
    fn an_unbalanced_bracket_ends_with_its_line() {
        assert_eq!(
            without_type_arguments("   1: f<a\n             at ./x.rs:1:2"),
            "   1: f\n             at ./x.rs:1:2"
        );
    }
}
