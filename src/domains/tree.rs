//! An L-system tree (scene section `tree`): the scene's tree, grown once and meshed.

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::{App, FieldError, Validate};
use sylva_systems::colonize::TreeReport;
use sylva_systems::lsystem::{LSystem, LSystemParams};
use sylva_systems::species::{self, TreeRecipe};
use sylva_systems::tree::{self, MeshParams, Placement, RadiusParams, Segment, Tree, TreeLook};

#[cfg(feature = "render")]
use super::draw::{Draw, FrameInput, Gathered};
use super::{Building, Domain, Invalid, grow_error};
use crate::{BuildError, Report, Scene};

/// A tree (scene section `tree`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TreeScene {
    /// The L-system that grows it. Default: see [`LSystemParams`].
    pub lsystem: LSystemParams,
    /// Pipe-model radii. Default: see [`RadiusParams`].
    pub radii: RadiusParams,
    /// Curve reduction and generalized-cylinder meshing. Default: see [`MeshParams`].
    pub mesh: MeshParams,
    /// Where the root stands, world space (Y up), metres. Default: the origin.
    pub position: Vec3,
    /// Metres per turtle unit. The thesis works in Unreal units (centimetres),
    /// so the default is 0.01.
    pub scale: f32,
    /// Leaves and colours. Default: see [`TreeLook`] (green leaves at every twig tip).
    /// Not serialized: the look only shows, so it changes neither a scene's fingerprint nor
    /// a world's chunk keys.
    #[serde(skip_serializing)]
    pub look: TreeLook,
}

impl Default for TreeScene {
    fn default() -> Self {
        Self {
            lsystem: LSystemParams::default(),
            radii: RadiusParams::default(),
            mesh: MeshParams::default(),
            position: Vec3::ZERO,
            scale: 0.01,
            look: TreeLook::default(),
        }
    }
}

impl TreeScene {
    /// How the tree grows and looks.
    pub(crate) fn recipe(&self) -> TreeRecipe<'_> {
        TreeRecipe {
            lsystem: &self.lsystem,
            radii: &self.radii,
            mesh: &self.mesh,
            look: &self.look,
        }
    }

    /// Where the tree stands and how its turtle units scale into the world.
    pub(crate) fn placement(&self) -> Placement {
        Placement {
            position: self.position,
            scale: self.scale,
        }
    }
}

impl Validate for TreeScene {
    /// Checks the L-system's, radii's and mesh's ranges and the placement; the grammar's
    /// syntax is checked by [`Scene::from_str`](crate::Scene::from_str).
    fn validate(&self) -> Result<(), FieldError> {
        self.lsystem.validate().map_err(|e| e.within("lsystem"))?;
        self.radii.validate().map_err(|e| e.within("radii"))?;
        self.mesh.validate().map_err(|e| e.within("mesh"))?;
        self.look.validate().map_err(|e| e.within("look"))?;
        FieldError::check(self.position.is_finite(), "position", || "must be finite".into())?;
        FieldError::check(self.scale.is_finite() && self.scale > 0.0, "scale", || {
            format!("must be a positive number, got {}", self.scale)
        })
    }
}

/// The scene's L-system tree; the tree render batch every scene has.
pub(crate) struct TreeDomain;

impl Domain for TreeDomain {
    fn validate(&self, scene: &Scene) -> Result<(), Invalid> {
        let Some(tree) = &scene.tree else {
            return Ok(());
        };
        tree.validate().map_err(|e| e.within("tree"))?;
        LSystem::parse(&tree.lsystem.grammar).map_err(|error| Invalid::Grammar {
            field: "tree.lsystem.grammar".into(),
            error,
        })?;
        Ok(())
    }

    fn build(&self, scene: &Scene, building: &mut Building) -> Result<(), BuildError> {
        // Forests and colonized trees draw through the same batch.
        tree::install_extraction(&mut building.app);
        if let Some(t) = &scene.tree {
            let grown = species::build(&mut building.app, t.recipe(), t.placement(), scene.seed);
            building.tree = Some(grown.map_err(|e| grow_error(scene, "tree", e))?);
        }
        Ok(())
    }

    fn report(&self, app: &App, report: &mut Report) {
        report.entities.insert("trees".into(), app.world.count::<Tree>());
        report.entities.insert("segments".into(), app.world.count::<Segment>());
        // Colonized trees report here too: one tree object, however it grew.
        report.tree = TreeReport::of(app);
    }

    #[cfg(feature = "render")]
    fn gather(&self, frame: &mut Gathered<'_>) {
        frame.draw::<tree::TreeBatch>();
    }
}

#[cfg(feature = "render")]
impl Draw for tree::TreeBatch {
    /// Where every tree is an instance of a model (a forest alone), the instances, drawn from
    /// the models uploaded once: the world-space bark and leaves stay on the host. Otherwise
    /// the bark and leaves as they stand, uncarded, so that no tree without a model is cut
    /// away.
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>) {
        if self.cards.is_empty() {
            input.cylinders.push(&mut self.cylinders);
            input.leaves.push(&mut self.leaves);
        } else {
            input.instanced.push(&mut self.cards);
            input.tree_models = Some(&self.models);
        }
    }
}
