//! Packing systems into conflict-free stages and running them.
//!
//! Systems run in the order they were added, except that a system may run
//! alongside earlier ones it does not conflict with. Packing is greedy: each
//! system goes into the first stage after the last stage holding a system it
//! conflicts with. So for any conflicting pair the earlier-added system always
//! finishes first, and the result never depends on thread timing.

use std::time::{Duration, Instant};

use hecs::CommandBuffer;

use crate::metrics::Metrics;
use crate::system::{System, SystemContext, Time};
use crate::world::World;

/// An ordered set of systems, run stage by stage.
#[derive(Default)]
pub struct Schedule {
    systems: Vec<System>,
    buffers: Vec<CommandBuffer>,
    stages: Option<Vec<Vec<usize>>>,
}

impl Schedule {
    /// An empty schedule.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a system. Systems added later run after the earlier ones they conflict with.
    ///
    /// # Panics
    /// When a system with the same name exists: names key the report.
    pub fn add(&mut self, system: System) -> &mut Self {
        assert!(
            self.systems.iter().all(|s| s.name != system.name),
            "a system named `{}` is already scheduled",
            system.name
        );
        self.systems.push(system);
        self.buffers.push(CommandBuffer::new());
        self.stages = None;
        self
    }

    /// Number of systems.
    pub fn len(&self) -> usize {
        self.systems.len()
    }

    /// True when no system is scheduled.
    pub fn is_empty(&self) -> bool {
        self.systems.is_empty()
    }

    /// The stages as lists of system names, in run order.
    pub fn stages(&mut self) -> Vec<Vec<String>> {
        let stages = self.packed().clone();
        stages
            .iter()
            .map(|st| st.iter().map(|&i| self.systems[i].name.clone()).collect())
            .collect()
    }

    fn packed(&mut self) -> &Vec<Vec<usize>> {
        self.stages.get_or_insert_with(|| pack(&self.systems))
    }

    /// Runs every stage once: the systems of a stage concurrently on the
    /// current rayon pool, then their command buffers in system order.
    pub fn run(&mut self, world: &mut World, time: Time, metrics: &mut Metrics) {
        let stages = self.packed().clone();
        for stage in &stages {
            let timings = self.run_stage(stage, world, time);
            for (&i, d) in stage.iter().zip(timings) {
                metrics.record_system(&self.systems[i].name, d);
            }
            for &i in stage {
                self.buffers[i].run_on(&mut world.entities);
            }
        }
    }

    fn run_stage(&mut self, stage: &[usize], world: &World, time: Time) -> Vec<Duration> {
        // Hand each system of the stage its own `&mut System` and buffer.
        let mut jobs: Vec<(&mut System, &mut CommandBuffer)> = self
            .systems
            .iter_mut()
            .zip(self.buffers.iter_mut())
            .enumerate()
            .filter(|(i, _)| stage.contains(i))
            .map(|(_, pair)| pair)
            .collect();
        let run_one = |(system, buffer): &mut (&mut System, &mut CommandBuffer)| -> Duration {
            let System { name, access, run } = &mut **system;
            let ctx = SystemContext::new(
                &world.entities,
                &world.resources,
                name,
                access,
                std::mem::take(*buffer),
                time,
            );
            let t0 = Instant::now();
            run(&ctx);
            let elapsed = t0.elapsed();
            **buffer = ctx.into_commands();
            elapsed
        };
        if jobs.len() == 1 {
            return vec![run_one(&mut jobs[0])];
        }
        let mut timings = vec![Duration::ZERO; jobs.len()];
        rayon::scope(|scope| {
            for (job, slot) in jobs.iter_mut().zip(timings.iter_mut()) {
                let run_one = &run_one;
                scope.spawn(move |_| *slot = run_one(job));
            }
        });
        timings
    }
}

fn pack(systems: &[System]) -> Vec<Vec<usize>> {
    let mut stage_of: Vec<usize> = Vec::with_capacity(systems.len());
    let mut stages: Vec<Vec<usize>> = Vec::new();
    for (i, s) in systems.iter().enumerate() {
        let stage = (0..i)
            .filter(|&j| systems[j].access.conflicts_with(&s.access))
            .map(|j| stage_of[j] + 1)
            .max()
            .unwrap_or(0);
        stage_of.push(stage);
        if stage == stages.len() {
            stages.push(Vec::new());
        }
        stages[stage].push(i);
    }
    stages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering::SeqCst};

    struct A;
    struct B;
    struct C;

    fn noop(name: &str, access: Access) -> System {
        System::new(name, access, |_| {})
    }

    #[test]
    fn packs_non_conflicting_systems_together() {
        let mut s = Schedule::new();
        s.add(noop("wa", Access::new().write::<A>()));
        s.add(noop("wb", Access::new().write::<B>()));
        s.add(noop("ra", Access::new().read::<A>()));
        s.add(noop("ra2", Access::new().read::<A>().read::<B>()));
        s.add(noop("wc", Access::new().write::<C>()));
        s.add(noop("wa_again", Access::new().write::<A>()));
        assert_eq!(
            s.stages(),
            vec![vec!["wa", "wb", "wc"], vec!["ra", "ra2"], vec!["wa_again"]]
        );
    }

    #[test]
    fn a_later_system_never_jumps_a_conflicting_earlier_one() {
        let mut s = Schedule::new();
        s.add(noop("w_res", Access::new().write_res::<A>()));
        s.add(noop("r_b", Access::new().read::<B>()));
        s.add(noop("r_res", Access::new().read_res::<A>()));
        let stages = s.stages();
        assert_eq!(stages, vec![vec!["w_res", "r_b"], vec!["r_res"]]);
    }

    #[test]
    #[should_panic(expected = "already scheduled")]
    fn duplicate_names_are_refused() {
        let mut s = Schedule::new();
        s.add(noop("x", Access::new()));
        s.add(noop("x", Access::new()));
    }

    /// Per type: writers currently inside (≤ 1) and readers currently inside.
    #[derive(Default)]
    struct Occupancy {
        writers: [AtomicI32; 4],
        readers: [AtomicI32; 4],
        violations: AtomicUsize,
        overlaps: AtomicUsize,
    }

    #[test]
    fn conflicting_systems_never_run_at_once() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let occ = Arc::new(Occupancy::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let mut schedule = Schedule::new();
        // 24 systems over 4 resource types with pseudo-random read/write sets.
        let mut x = 0x1234_5678u64;
        for n in 0..24 {
            let mut access = Access::new();
            let mut reads = vec![];
            let mut writes = vec![];
            for t in 0..4 {
                x = crate::rng::mix64(x);
                match x % 3 {
                    0 => {
                        reads.push(t);
                        access = declare(access, t, false);
                    }
                    1 => {
                        writes.push(t);
                        access = declare(access, t, true);
                    }
                    _ => {}
                }
            }
            let occ = occ.clone();
            let inside = inside.clone();
            schedule.add(System::new(format!("s{n}"), access, move |_| {
                let now = inside.fetch_add(1, SeqCst);
                if now > 0 {
                    occ.overlaps.fetch_add(1, SeqCst);
                }
                for &t in &writes {
                    if occ.writers[t].fetch_add(1, SeqCst) != 0 || occ.readers[t].load(SeqCst) != 0 {
                        occ.violations.fetch_add(1, SeqCst);
                    }
                }
                for &t in &reads {
                    occ.readers[t].fetch_add(1, SeqCst);
                    if occ.writers[t].load(SeqCst) != 0 {
                        occ.violations.fetch_add(1, SeqCst);
                    }
                }
                std::thread::sleep(Duration::from_micros(300));
                for &t in &writes {
                    occ.writers[t].fetch_sub(1, SeqCst);
                }
                for &t in &reads {
                    occ.readers[t].fetch_sub(1, SeqCst);
                }
                inside.fetch_sub(1, SeqCst);
            }));
        }
        let mut world = World::new();
        let mut metrics = Metrics::default();
        pool.install(|| {
            for _ in 0..30 {
                schedule.run(&mut world, Time::default(), &mut metrics);
            }
        });
        assert_eq!(occ.violations.load(SeqCst), 0);
        // The test only means something if systems did run concurrently.
        assert!(occ.overlaps.load(SeqCst) > 0, "no stage ran systems concurrently");
        assert_eq!(metrics.systems()["s0"].calls, 30);
    }

    fn declare(a: Access, t: usize, write: bool) -> Access {
        struct T0;
        struct T1;
        struct T2;
        struct T3;
        match (t, write) {
            (0, false) => a.read_res::<T0>(),
            (0, true) => a.write_res::<T0>(),
            (1, false) => a.read_res::<T1>(),
            (1, true) => a.write_res::<T1>(),
            (2, false) => a.read_res::<T2>(),
            (2, true) => a.write_res::<T2>(),
            (3, false) => a.read_res::<T3>(),
            _ => a.write_res::<T3>(),
        }
    }

    #[derive(Debug, PartialEq)]
    struct Marker(u32);

    #[test]
    fn commands_apply_between_stages_in_system_order() {
        let mut schedule = Schedule::new();
        schedule.add(System::new("spawn_b", Access::new().write::<B>(), |ctx| {
            ctx.commands().spawn((Marker(2),));
        }));
        schedule.add(System::new("spawn_a", Access::new().write::<A>(), |ctx| {
            ctx.commands().spawn((Marker(1),));
        }));
        // Reads Marker: runs in the next stage and must see both spawns.
        let seen = Arc::new(AtomicUsize::new(0));
        let seen2 = seen.clone();
        schedule.add(System::new(
            "count",
            Access::new().read::<Marker>().write::<A>(),
            move |ctx| {
                seen2.store(ctx.query::<&Marker>().iter().count(), SeqCst);
            },
        ));
        assert_eq!(schedule.stages().len(), 2);
        let mut world = World::new();
        schedule.run(&mut world, Time::default(), &mut Metrics::default());
        assert_eq!(seen.load(SeqCst), 2);
        let mut order: Vec<(u32, u32)> = world
            .entities
            .query::<(hecs::Entity, &Marker)>()
            .iter()
            .map(|(e, m)| (e.id(), m.0))
            .collect();
        order.sort();
        // spawn_b was added first, so its entity is created first.
        assert_eq!(order, vec![(0, 2), (1, 1)]);
    }

    #[test]
    #[should_panic(expected = "without declaring it")]
    fn undeclared_component_access_panics() {
        let mut schedule = Schedule::new();
        schedule.add(System::new("sneaky", Access::new().read::<Marker>(), |ctx| {
            ctx.query::<&mut Marker>().iter().for_each(|m| m.0 += 1);
        }));
        let mut world = World::new();
        schedule.run(&mut world, Time::default(), &mut Metrics::default());
    }

    #[test]
    #[should_panic(expected = "without declaring it")]
    fn undeclared_resource_access_panics() {
        let mut schedule = Schedule::new();
        schedule.add(System::new("sneaky", Access::new(), |ctx| {
            let _ = ctx.res::<u32>();
        }));
        let mut world = World::new();
        world.resources.insert(1u32);
        schedule.run(&mut world, Time::default(), &mut Metrics::default());
    }
}
