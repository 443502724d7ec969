//! The scene's domains as units, after bevy's plugins: each domain (the hanging chains, an
//! L-system tree, colonization, terrain, a forest, grass, a world) implements [`Domain`] once —
//! its scene section's validation, its memory estimate, its build into the app, its part of
//! the report and, where it draws, its batches of a frame — and [`DOMAINS`] lists them in the
//! order they are built and drawn. The facade only iterates that list: [`Scene::validate`](sylva_runtime::Validate)
//! checks each section, [`memory::estimate`](crate::memory::estimate) adds each part,
//! [`build_within`](crate::build_within) builds each into the app, [`Report::gather`] asks each
//! for its part and `render` (feature `render`) gathers each one's batches.
//!
//! A new domain is a module here with a unit struct implementing [`Domain`], one line in
//! [`DOMAINS`], its section as a field of [`Scene`], if it reports, a field of [`Report`] and,
//! if it draws, its `gather` and a `Draw` impl for each of its batches; `render` is left as
//! it is.
//!
//! Errors a domain meets while building are placed in the scene file at the field they come
//! from ([`under`], [`grow_error`], [`colonize_error`], [`tree_error`]), so that a grammar that
//! overflows names its line, as a value out of range does.

mod chains;
mod colonize;
#[cfg(feature = "render")]
mod draw;
mod forest;
mod grass;
mod terrain;
mod tree;
mod world;

#[cfg(feature = "render")]
pub(crate) use draw::Gathered;
pub use grass::{BladeError, BladeSource, GrassScene, GrassSpecies};
pub use tree::TreeScene;

use sylva_runtime::{App, FieldError, Validate};
use sylva_systems::colonize::ColonizeError;
use sylva_systems::lsystem::LSystemError;
use sylva_systems::placement::AppGround;
use sylva_systems::species::{GrowError, GrownTree};
use sylva_systems::tree::TreeError;
use sylva_systems::world::WorldStreamer;

use crate::memory::{Estimate, MemoryLimit, OverLimit, Part, WordsOverLimit};
use crate::{BuildError, Report, Scene};

/// What the facade does with one domain of a scene.
pub(crate) trait Domain: Sync {
    /// Checks what the section's types cannot express; an error's path starts at the scene's
    /// root. A scene without the section passes.
    fn validate(&self, scene: &Scene) -> Result<(), Invalid>;

    /// Adds the parts of memory the section will allocate that are known from the scene alone
    /// (what is known only once something has grown is added while building, with
    /// [`Building::spend`]).
    fn estimate(&self, _scene: &Scene, _estimate: &mut Estimate) {}

    /// Builds the section into the app, after the domains before it in [`DOMAINS`].
    fn build(&self, scene: &Scene, building: &mut Building) -> Result<(), BuildError>;

    /// Fills the domain's part of `report`: its entity counts (written even when zero, since
    /// the report's keys are a contract) and its report object.
    fn report(&self, _app: &App, _report: &mut Report) {}

    /// Has `frame` hold the batches the domain draws, those the app has (see [`Gathered`]);
    /// a domain that does not draw, or draws through another's batch, holds none.
    #[cfg(feature = "render")]
    fn gather(&self, _frame: &mut Gathered<'_>) {}
}

/// Every domain, in build order: things that stand on the terrain (forest, grass) come after
/// it, and the world, whose species grow once for all chunks, comes last. It is the draw
/// order too: the tree's batch follows the springs' so that its cards match the last
/// batches, and the world gathers last so that its models replace a forest's cards.
pub(crate) const DOMAINS: [&dyn Domain; 7] = [
    &chains::ChainsDomain,
    &tree::TreeDomain,
    &colonize::ColonizeDomain,
    &terrain::TerrainDomain,
    &forest::ForestDomain,
    &grass::GrassDomain,
    &world::WorldDomain,
];

/// Why a section is invalid: a value out of range, or a grammar that does not parse (placed
/// at its line inside the grammar string).
#[derive(Debug)]
pub(crate) enum Invalid {
    /// A field's value.
    Field(FieldError),
    /// The grammar string at the dotted path `field`.
    Grammar {
        /// Where the grammar is written.
        field: String,
        /// What is wrong with it.
        error: LSystemError,
    },
}

impl From<FieldError> for Invalid {
    fn from(e: FieldError) -> Self {
        Invalid::Field(e)
    }
}

/// An app being built from a scene: what the domains build into and hand on to each other.
pub(crate) struct Building {
    /// The app under construction.
    pub app: App,
    /// The scene's tree with its mesh, once a domain has grown one.
    pub tree: Option<GrownTree>,
    /// The scene's world, once built.
    pub world: Option<WorldStreamer>,
    estimate: Estimate,
    limit: MemoryLimit,
    /// The ground, copied out of the terrain once for every domain that plants on it.
    ground: Option<AppGround>,
}

impl Building {
    /// Starts building into `app`, with the scene's estimate so far held to `limit`.
    pub fn new(app: App, estimate: Estimate, limit: MemoryLimit) -> Self {
        Self {
            app,
            tree: None,
            world: None,
            estimate,
            limit,
            ground: None,
        }
    }

    /// Adds `part`, known only now, to the estimate, and refuses the scene if it no longer fits,
    /// before the memory is spent.
    pub fn spend(&mut self, scene: &Scene, part: Part) -> Result<(), BuildError> {
        self.estimate.push(part);
        self.limit
            .check(&self.estimate)
            .map_err(|over| memory_error(scene, &over))
    }

    /// The app, and the ground things are planted on: the terrain built so far (flat ground
    /// without one), taken on the first call; domains that change the terrain come before
    /// the ones that plant (see [`DOMAINS`]).
    pub fn app_and_ground(&mut self) -> (&mut App, &AppGround) {
        let ground = self.ground.get_or_insert_with(|| AppGround::of(&self.app));
        (&mut self.app, ground)
    }
}

/// Checks the scene section `name` when the scene has it.
fn check_section(section: Option<&impl Validate>, name: &str) -> Result<(), Invalid> {
    match section {
        Some(s) => s.validate().map_err(|e| Invalid::Field(e.within(name))),
        None => Ok(()),
    }
}

/// A scene over its memory limit, at the field that costs the most.
pub(crate) fn memory_error(scene: &Scene, over: &OverLimit) -> BuildError {
    scene.error_at(&FieldError::new(over.field(), over.to_string())).into()
}

/// An L-system whose words at its module limit would not fit the memory limit, at that limit.
pub(crate) fn words_error(scene: &Scene, over: &WordsOverLimit) -> BuildError {
    scene
        .error_at(&FieldError::new(&over.derivation.field, over.to_string()))
        .into()
}

/// `e`, whose path is below the scene field `at` (a dotted path), with the path from the root.
fn under(at: &str, e: FieldError) -> FieldError {
    at.rsplit('.').fold(e, FieldError::within)
}

/// A tree's growth failure at the scene field `at`: a grammar error at its place in the grammar.
fn grow_error(scene: &Scene, at: &str, e: GrowError) -> BuildError {
    match e {
        GrowError::LSystem(LSystemError::InvalidParameter(f)) => scene.error_at(&under(&format!("{at}.lsystem"), f)),
        GrowError::LSystem(e) => scene.grammar_error_at(&format!("{at}.lsystem.grammar"), &e),
        GrowError::Tree(e) => return tree_error(scene, at, &e),
    }
    .into()
}

/// A graph or mesh failure of the trees the scene field `at` grows.
fn tree_error(scene: &Scene, at: &str, e: &TreeError) -> BuildError {
    scene.error_at(&FieldError::new(at, e.to_string())).into()
}

/// A colonization failure of the scene field `at`.
fn colonize_error(scene: &Scene, at: &str, e: ColonizeError) -> BuildError {
    let field = match e {
        ColonizeError::InvalidParam(f) => under(at, f),
        ColonizeError::PointFile { .. } | ColonizeError::Io { .. } => {
            FieldError::new(&format!("{at}.points_file"), e.to_string())
        }
        ColonizeError::Tree(e) => return tree_error(scene, at, &e),
    };
    scene.error_at(&field).into()
}

#[cfg(test)]
mod tests {
    use glam::Vec3;
    use sylva_runtime::AppConfig;
    use sylva_runtime::extract::CylinderBatch;

    use super::*;

    /// A domain of a test's own: a marker resource built from the scene's seed, a report
    /// entity count and a post drawn where the marker stands. It shows the whole of what
    /// adding a domain takes: the struct, its `Domain` impl, the `Draw` impl of what it draws,
    /// and its place in a list of domains.
    struct Marker;

    #[derive(Debug, PartialEq)]
    struct Planted(u64);

    /// The marker's render batch: one post, `seed` metres along x.
    struct Post(CylinderBatch);

    #[cfg(feature = "render")]
    impl draw::Draw for Post {
        fn lend<'f>(&'f mut self, input: &mut draw::FrameInput<'f>) {
            input.cylinders.push(&mut self.0);
        }
    }

    impl Domain for Marker {
        fn validate(&self, scene: &Scene) -> Result<(), Invalid> {
            FieldError::check(scene.seed != 13, "seed", || "13 is unlucky".into())?;
            Ok(())
        }
        fn estimate(&self, _: &Scene, estimate: &mut Estimate) {
            estimate.add("marker", "one marker".into(), 1 << 40);
        }
        fn build(&self, scene: &Scene, building: &mut Building) -> Result<(), BuildError> {
            let mut post = CylinderBatch::default();
            let foot = Vec3::X * scene.seed as f32;
            post.push(foot, foot + Vec3::Y, 0.1, 0.1, [255; 4]);
            building.app.world.resources.insert(Planted(scene.seed));
            building.app.world.resources.insert(Post(post));
            Ok(())
        }
        fn report(&self, app: &App, report: &mut Report) {
            let posts = app.world.resources.get::<Post>().map_or(0, |p| p.0.len());
            report.entities.insert("markers".into(), posts);
        }
        #[cfg(feature = "render")]
        fn gather(&self, frame: &mut Gathered<'_>) {
            frame.draw::<Post>();
        }
    }

    fn app() -> App {
        App::new(AppConfig {
            threads: 1,
            ..AppConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn a_domain_is_validated_estimated_built_and_reported_through_the_trait_alone() {
        let mut scene = Scene::from_str("(seed: 7)", "m.ron").unwrap();
        let domains: [&dyn Domain; 2] = [&chains::ChainsDomain, &Marker];
        let mut estimate = Estimate::default();
        domains.iter().for_each(|d| d.estimate(&scene, &mut estimate));
        assert_eq!(estimate.total(), 1 << 40, "the chains section is absent");
        let mut building = Building::new(app(), estimate.clone(), MemoryLimit::NONE);
        for d in domains {
            d.validate(&scene).unwrap();
            d.build(&scene, &mut building).unwrap();
        }
        let app = building.app;
        assert_eq!(*app.world.resources.get::<Planted>().unwrap(), Planted(7));
        let mut report = Report::gather(&app, "m", std::time::Duration::ZERO).unwrap();
        domains.iter().for_each(|d| d.report(&app, &mut report));
        assert_eq!(report.entities["markers"], 1);
        assert_eq!(report.entities["particles"], 0);

        scene.seed = 13;
        let Err(Invalid::Field(e)) = Marker.validate(&scene) else {
            panic!("seed 13 is refused");
        };
        assert_eq!(e.dotted(), "seed");
        assert!(MemoryLimit::bytes(1 << 30).check(&estimate).is_err());
    }

    /// A domain's batch reaches the frame through its `gather` alone, in the place of the
    /// domain in the list: the renderer keeps one buffer per place, so the order is the list's.
    #[cfg(feature = "render")]
    #[test]
    fn a_domain_that_draws_is_gathered_through_the_trait_alone_in_list_order() {
        let scene = Scene::from_str("(seed: 7)", "m.ron").unwrap();
        let mut building = Building::new(app(), Estimate::default(), MemoryLimit::NONE);
        chains::ChainsDomain.build(&scene, &mut building).unwrap();
        Marker.build(&scene, &mut building).unwrap();
        let app = building.app;
        let lists: [[&dyn Domain; 2]; 2] = [[&chains::ChainsDomain, &Marker], [&Marker, &chains::ChainsDomain]];
        let mut seen = Vec::new();
        for domains in lists {
            let mut gathered = Gathered::of(&app, &domains);
            let input = gathered.input();
            assert!(input.terrain.is_none() && input.leaves.is_empty() && input.points.is_none());
            seen.push(input.cylinders.iter().map(|c| c.start.clone()).collect::<Vec<_>>());
        }
        let (springs, post) = (vec![], vec![Vec3::X * 7.0]);
        assert_eq!(
            seen[0],
            [springs.clone(), post.clone()],
            "the chains' springs, then the post"
        );
        assert_eq!(seen[1], [post, springs], "the post, then the springs");
    }

    /// The facade's list gathers springs before trees; a forest whose every tree has a card
    /// lends its trees as instances of its models, its world-space bark and leaves staying on the
    /// host, and a world lends its own trees in their place.
    #[cfg(feature = "render")]
    #[test]
    fn the_facade_draws_a_carded_forest_from_its_models_and_a_world_its_own() {
        use sylva_systems::particles::SpringBatch;
        use sylva_systems::tree::TreeBatch;
        use sylva_systems::world::WorldBatch;

        let mut app = app();
        let res = &mut app.world.resources;
        let mut springs = SpringBatch::default();
        springs.cylinders.push(Vec3::ZERO, Vec3::Y, 0.1, 0.1, [255; 4]);
        res.insert(springs);
        let mut trees = TreeBatch::default();
        trees.cylinders.push(Vec3::X, Vec3::X + Vec3::Y, 0.2, 0.1, [255; 4]);
        res.insert(trees);
        {
            let mut gathered = Gathered::of(&app, &DOMAINS);
            let input = gathered.input();
            let starts: Vec<_> = input.cylinders.iter().map(|c| c.start[0]).collect();
            assert_eq!(
                starts,
                [Vec3::ZERO, Vec3::X],
                "uncarded trees are drawn whole, after the springs"
            );
            assert!(input.instanced.is_empty() && input.tree_models.is_none());
        }
        app.world
            .resources
            .get_mut::<TreeBatch>()
            .unwrap()
            .cards
            .push(0, Vec3::X, 0.0, 1.0);
        {
            let mut gathered = Gathered::of(&app, &DOMAINS);
            let input = gathered.input();
            assert_eq!((input.cylinders.len(), input.leaves.len()), (1, 0), "the springs alone");
            assert_eq!(input.instanced.len(), 1);
            assert!(input.trees.is_empty());
        }
        let world = WorldBatch {
            trees: vec![Default::default(); 3],
            ..WorldBatch::default()
        };
        app.world.resources.insert(world);
        let mut gathered = Gathered::of(&app, &DOMAINS);
        let input = gathered.input();
        assert_eq!(input.instanced.len(), 3, "the world's trees alone");
    }

    /// A scene without sections passes every domain and costs nothing: a domain answers for
    /// its own section only.
    #[test]
    fn an_empty_scene_is_valid_and_free_in_every_domain() {
        let empty = Scene::default();
        for (k, d) in DOMAINS.iter().enumerate() {
            assert!(
                d.validate(&empty).is_ok(),
                "domain {k} refuses a scene without its section"
            );
            let mut e = Estimate::default();
            d.estimate(&empty, &mut e);
            assert_eq!(e.total(), 0, "domain {k} costs memory without its section");
        }
    }
}
