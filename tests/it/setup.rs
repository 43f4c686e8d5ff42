//! A plugin set missing a piece fails at startup with a message that says what to add.

use bevy::app::PluginGroup;
use bevy::prelude::*;
use bevy_loom::prelude::*;

#[test]
#[should_panic(expected = "add AssetPlugin (or DefaultPlugins) before LoomPlugins")]
fn loom_without_assets_says_to_add_them() {
    App::new().add_plugins((MinimalPlugins, LoomPlugins));
}

#[test]
#[should_panic(expected = "SmartActorPlugin needs LlmPlugin")]
fn smart_actors_without_the_bridge_say_so() {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin::default(),
        LoomPlugins.build().disable::<LlmPlugin>(),
    ));
    app.finish();
}
