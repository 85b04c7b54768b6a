//! Runs the `no_std` Iris training (`lib.rs`) as a program with no `std` and no global
//! allocator: it links only because nothing in it allocates. It prints two lines and exits
//! with 0 when a loop's gradient matches finite differences and the model learned (held-out
//! accuracy at least 90%, the loss fallen), 1 if not.
//!
//! Built for the host (Linux), where the C library starts the program and provides `write`,
//! `memcpy` and `memset`; on a microcontroller the same library runs unchanged.
#![no_std]
#![no_main]

use core::fmt::Write;

// The C library: the program's start (`main` below is called by it), `write` and `abort`.
#[link(name = "c")]
unsafe extern "C" {
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
    fn abort() -> !;
}

/// A line of text built without allocating.
struct Line {
    buf: [u8; 512],
    len: usize,
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(core::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl Line {
    fn print(&self) {
        // SAFETY: `buf[..len]` is initialised memory of this value, valid for reads of `len`
        // bytes; file descriptor 1 is standard output (a failed write is not an error here).
        unsafe { write(1, self.buf.as_ptr(), self.len) };
    }
}

#[unsafe(no_mangle)]
extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    let mut line = Line {
        buf: [0; 512],
        len: 0,
    };
    let err = paralens_no_std::loop_gradient_error();
    let _ = writeln!(
        line,
        "no_std chained Rosenbrock (a loop, its tape inline): gradient within {err:.1e} of finite differences"
    );
    let loop_ok = err < 1e-5;
    let ok = match paralens_no_std::train(40, 7) {
        Ok(r) => {
            let _ = writeln!(
                line,
                "no_std Iris MLP, no allocator: loss {:.3} -> {:.3}, held-out accuracy {:.3}",
                r.first_loss, r.last_loss, r.held_out_accuracy
            );
            r.held_out_accuracy >= 0.9 && r.last_loss < 0.5 * r.first_loss
        }
        Err(why) => {
            let _ = writeln!(line, "no_std Iris MLP: {why}");
            false
        }
    };
    line.print();
    if ok && loop_ok { 0 } else { 1 }
}

/// The unwinding personality routine that the precompiled `core` of a host target refers to.
/// Nothing unwinds here (panics abort), so it is never called; it exists so that the program
/// links without `std`, which would otherwise provide it.
#[unsafe(no_mangle)]
extern "C" fn rust_eh_personality() {}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    let mut line = Line {
        buf: [0; 512],
        len: 0,
    };
    let _ = line.write_str("no_std Iris MLP: panicked\n");
    line.print();
    // SAFETY: `abort` takes nothing and ends the process (there is no unwinding without
    // `std`; the profile's `panic = "abort"` says so to the compiler).
    unsafe { abort() }
}
