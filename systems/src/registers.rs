//! Which vector registers the lane kernels are compiled for, picked at run
//! time.
//!
//! Kernels are written as plain loops over slices; the compiler vectorizes
//! them for the target's baseline (SSE2 on x86-64) and, inside a function
//! with more target features, for wider registers. Every build performs the
//! same IEEE operations in the same order (Rust never fuses a multiply and an
//! add on its own), so results are bit for bit the same whichever runs.

/// The builds of the lane code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Registers {
    /// The target's baseline (SSE2 on x86-64).
    Portable,
    /// 256-bit AVX2.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// 512-bit AVX-512 with byte and word lanes (F, BW, DQ, VL: the
    /// x86-64-v4 set).
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Registers {
    /// The widest build this CPU runs (detected once, then one atomic load:
    /// hot loops call it per block).
    #[inline]
    pub(crate) fn best() -> Registers {
        static BEST: std::sync::OnceLock<Registers> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            {
                // AVX2 too: a CPU that runs the AVX-512 build also runs the
                // AVX2 one (`available`), which the kernels' safety rests on.
                if std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    return Registers::Avx512;
                }
                if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                    return Registers::Avx2;
                }
            }
            Registers::Portable
        })
    }

    /// Whether this CPU runs the build.
    #[inline]
    pub(crate) fn available(self) -> bool {
        match self {
            Registers::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Registers::Avx2 => Registers::best() != Registers::Portable,
            #[cfg(target_arch = "x86_64")]
            Registers::Avx512 => Registers::best() == Registers::Avx512,
        }
    }

    /// Every build this CPU runs, the baseline first: what tests that
    /// compare the builds go through.
    #[cfg(test)]
    pub(crate) fn all_available() -> Vec<Registers> {
        #[cfg(target_arch = "x86_64")]
        let builds = [Registers::Portable, Registers::Avx2, Registers::Avx512];
        #[cfg(not(target_arch = "x86_64"))]
        let builds = [Registers::Portable];
        builds.into_iter().filter(|r| r.available()).collect()
    }

    /// Runs `kernel` compiled for this build.
    ///
    /// The build reaches what [`Kernel::run`] inlines, so the loops it calls
    /// should be small or `#[inline(always)]`; what it calls out of line
    /// runs on the baseline.
    ///
    /// # Panics
    ///
    /// When the CPU does not run the build (see [`Registers::available`]).
    #[inline(always)]
    pub(crate) fn run<K: Kernel>(self, kernel: K) -> K::Output {
        assert!(self.available(), "{self:?} registers on a CPU without them");
        match self {
            Registers::Portable => kernel.run(),
            // SAFETY: `avx2` is compiled for AVX2 and FMA, and the assert
            // above stopped unless `available` found both on this CPU (`best`
            // detected them for either wide build).
            #[cfg(target_arch = "x86_64")]
            Registers::Avx2 => unsafe { avx2(kernel) },
            // SAFETY: `avx512` is compiled for AVX-512 F, BW, DQ, VL and
            // FMA, and the assert above stopped unless `available` found them
            // on this CPU (`best` detected them).
            #[cfg(target_arch = "x86_64")]
            Registers::Avx512 => unsafe { avx512(kernel) },
        }
    }
}

/// A piece of lane code with its arguments, for [`Registers::run`]. A trait
/// rather than a closure: closures and function items are called through a
/// shim the compiler does not inline, which would leave the code on the
/// baseline. Implementations mark `run` `#[inline(always)]`.
///
/// The grass lanes keep their own `#[target_feature]` methods over `&self`
/// and slice arguments: moved onto a `Kernel`, the grass bake ran 8 % slower.
pub(crate) trait Kernel {
    /// What the kernel returns.
    type Output;
    /// Runs the kernel.
    fn run(self) -> Self::Output;
}

impl Default for Registers {
    /// The widest build this CPU runs.
    fn default() -> Self {
        Registers::best()
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn avx2<K: Kernel>(kernel: K) -> K::Output {
    kernel.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,fma")]
fn avx512<K: Kernel>(kernel: K) -> K::Output {
    kernel.run()
}
