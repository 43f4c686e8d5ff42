//! The settings resources are reflected and registered, so an inspector or a
//! reflection-based editor can read and change them while the game runs.

use std::any::TypeId;

use bevy::prelude::*;
use bevy::reflect::{GetPath, TypeRegistry};
use bevy_loom::llm::SamplingOptions;
use bevy_loom::prelude::*;
use bevy_loom::prompt::{BlockOptions, DecisionLimits};
use bevy_loom::testing::{HeadlessApp, content_folder};

/// The app, with its (empty) content folder kept alive beside it.
fn app() -> (tempfile::TempDir, App) {
    let no_files: &[(&str, &str)] = &[];
    let folder = content_folder(no_files).expect("a temporary folder");
    let app = HeadlessApp::new(folder.path()).build();
    (folder, app)
}

fn registered<T: 'static>(registry: &TypeRegistry) -> bool {
    registry.get(TypeId::of::<T>()).is_some()
}

#[test]
fn every_settings_resource_and_its_parts_are_registered() {
    let (_folder, app) = app();
    let registry = app.world().resource::<AppTypeRegistry>().read();
    assert!(registered::<SmartActorSettings>(&registry));
    assert!(registered::<LlmSettings>(&registry));
    assert!(registered::<NarrationSettings>(&registry));
    assert!(registered::<ContentSettings>(&registry));
    assert!(registered::<bevy_loom::actors::RecallSettings>(&registry));
    assert!(registered::<PromptBudgets>(&registry));
    assert!(registered::<BlockOptions>(&registry));
    assert!(registered::<DecisionLimits>(&registry));
    assert!(registered::<SamplingOptions>(&registry));
}

#[test]
fn a_nested_setting_changes_through_reflection() {
    let (_folder, mut app) = app();
    {
        let registry = app.world().resource::<AppTypeRegistry>().read();
        for settings in [
            TypeId::of::<SmartActorSettings>(),
            TypeId::of::<LlmSettings>(),
            TypeId::of::<NarrationSettings>(),
            TypeId::of::<ContentSettings>(),
        ] {
            assert!(
                registry
                    .get_type_data::<ReflectResource>(settings)
                    .is_some(),
                "{settings:?} reflects as a resource"
            );
        }
    }
    let mut settings = app.world_mut().resource_mut::<SmartActorSettings>();
    let settings: &mut dyn Reflect = settings.as_mut();
    *settings
        .reflect_path_mut("budgets.total")
        .expect("a reflected field")
        .try_downcast_mut::<usize>()
        .expect("a count") = 4321;
    let temperature = app
        .world()
        .resource::<LlmSettings>()
        .path::<Option<f32>>("sampling.temperature")
        .copied()
        .expect("a reflected field");
    assert_eq!(temperature, LlmSettings::default().sampling.temperature);
    assert_eq!(
        app.world().resource::<SmartActorSettings>().budgets.total,
        4321
    );
}
