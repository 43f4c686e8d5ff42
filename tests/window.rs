//! The windowed tavern in a real window: the example runs for a fixed number of frames
//! with the debug overlay shown and hidden, saving a screenshot each time, and the
//! screenshots are checked: the window's size, a scene drawn (not one flat colour),
//! and the overlay's panel there only when it is shown.
//!
//! Needs a display: without `DISPLAY` it runs the example under `xvfb-run` (Debian's
//! `xvfb`), with a software Vulkan driver (`mesa-vulkan-drivers`); `.ci/run` installs
//! both. Run it with `cargo test --features overlay --test window`.

use std::path::{Path, PathBuf};
use std::process::Command;

use bevy::asset::RenderAssetUsages;
use bevy::image::{CompressedImageFormats, Image, ImageSampler, ImageType};
use bevy::prelude::*;

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 720;
/// Frames before the screenshot: the content loads, the scene is drawn and a turn or
/// two is played.
const FRAMES: &str = "120";
/// Where the overlay's panel is: the window's right 46%.
const PANEL_LEFT: u32 = WIDTH * 54 / 100 + 4;

/// Runs the windowed example for [`FRAMES`] frames and returns its screenshot.
fn screenshot(folder: &Path, name: &str, show_overlay: bool) -> Image {
    let path: PathBuf = folder.join(format!("{name}.png"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut example = vec![
        cargo,
        "run".into(),
        "--quiet".into(),
        "--features".into(),
        "overlay".into(),
        "--example".into(),
        "tavern_window".into(),
        "--".into(),
        "--frames".into(),
        FRAMES.into(),
        "--screenshot".into(),
        path.to_string_lossy().into_owned(),
    ];
    if show_overlay {
        example.push("--show-overlay".into());
    }
    let has_display = std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty());
    let command: Vec<String> = if has_display {
        example
    } else {
        let screen = format!("-screen 0 {WIDTH}x{HEIGHT}x24");
        ["xvfb-run", "-a", "-s", &screen]
            .into_iter()
            .map(str::to_owned)
            .chain(example)
            .collect()
    };
    let output = Command::new(&command[0])
        .args(&command[1..])
        .env_remove("LOOM_LLM_URL")
        .output()
        .unwrap_or_else(|error| {
            panic!(
                "cannot run `{}`: {error}; this test needs a display, or `xvfb-run` \
                 (apt install xvfb mesa-vulkan-drivers)",
                command[0]
            )
        });
    assert!(
        output.status.success(),
        "the windowed tavern failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|error| {
        panic!(
            "no screenshot at {}: {error}\n{}",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    Image::from_buffer(
        &bytes,
        ImageType::Extension("png"),
        CompressedImageFormats::NONE,
        true,
        ImageSampler::Default,
        RenderAssetUsages::default(),
    )
    .expect("a PNG")
}

/// The colours of every 8th pixel in `columns` × `rows`, as 8-bit RGB.
fn samples(
    image: &Image,
    columns: std::ops::Range<u32>,
    rows: std::ops::Range<u32>,
) -> Vec<[u8; 3]> {
    let mut colours = Vec::new();
    for y in rows.step_by(8) {
        for x in columns.clone().step_by(8) {
            let colour = image.get_color_at(x, y).expect("a pixel").to_srgba();
            let byte = |channel: f32| (channel * 255.0).round() as u8;
            colours.push([byte(colour.red), byte(colour.green), byte(colour.blue)]);
        }
    }
    colours
}

fn distinct(colours: &[[u8; 3]]) -> usize {
    let mut seen = colours.to_vec();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

#[test]
fn the_tavern_window_draws_its_scene_and_the_overlay_when_shown() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let shown = screenshot(folder.path(), "overlay-shown", true);
    let hidden = screenshot(folder.path(), "overlay-hidden", false);
    for image in [&shown, &hidden] {
        assert_eq!((image.width(), image.height()), (WIDTH, HEIGHT));
    }

    // The scene: rooms, tokens and their names, narration.
    let scene = samples(&hidden, 0..PANEL_LEFT, 0..HEIGHT);
    assert!(
        distinct(&scene) >= 6,
        "the scene is drawn, not one flat colour: {} colours",
        distinct(&scene)
    );

    // The panel: there, with text on it, when shown; the empty floor when hidden.
    let with_panel = samples(&shown, PANEL_LEFT..WIDTH, 0..HEIGHT);
    let without = samples(&hidden, PANEL_LEFT..WIDTH, 0..HEIGHT);
    let differing = (with_panel.iter().zip(&without))
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        differing * 10 >= with_panel.len() * 9,
        "the overlay's panel covers its region: {differing} of {} samples differ",
        with_panel.len()
    );
    assert!(
        distinct(&with_panel) >= 3,
        "the panel has text on it: {} colours",
        distinct(&with_panel)
    );
    assert_eq!(distinct(&without), 1, "nothing there when hidden");
}

/// The overlay's panel without a window: F12 shows it with a row per smart actor and
/// the first one's details, Tab picks the next, F12 hides it again.
#[test]
fn f12_shows_the_panel_and_tab_picks_the_next_actor() {
    use bevy_loom::overlay::{DebugOverlay, LoomDebugOverlayPlugin};
    use bevy_loom::prelude::SmartActor;
    use bevy_loom::world::DisplayName;

    let mut app = App::new();
    app.add_plugins((MinimalPlugins, LoomDebugOverlayPlugin::default()))
        // Keys pressed by the test: without Bevy's input plugin, nothing clears them but it.
        .init_resource::<ButtonInput<KeyCode>>();
    let actor = |name: &str| {
        (
            SmartActor::new("tavern:marta"),
            DisplayName(name.to_owned()),
        )
    };
    let world = app.world_mut();
    let [brom, marta, silas] = [
        world.spawn(actor("Brom")).id(),
        world.spawn(actor("Marta")).id(),
        world.spawn(actor("Silas")).id(),
    ];
    app.update();
    let press = |app: &mut App, key: KeyCode| {
        app.world_mut()
            .resource_mut::<ButtonInput<KeyCode>>()
            .press(key);
        app.update();
        let mut input = app.world_mut().resource_mut::<ButtonInput<KeyCode>>();
        input.release_all();
        input.clear();
    };
    let panel_shown = |app: &mut App| {
        let mut nodes = app.world_mut().query::<(&Node, &GlobalZIndex)>();
        let (node, _) = nodes.single(app.world()).expect("one panel");
        node.display != Display::None
    };
    let labels = |app: &mut App| {
        let mut rows = app.world_mut().query::<(&Button, &Text)>();
        let mut labels: Vec<String> = rows
            .iter(app.world())
            .map(|(_, text)| text.0.clone())
            .collect();
        labels.sort();
        labels
    };
    assert!(!panel_shown(&mut app), "hidden at first");
    assert!(labels(&mut app).is_empty(), "nothing drawn while hidden");

    press(&mut app, KeyCode::F12);
    app.update();
    assert!(panel_shown(&mut app));
    assert_eq!(
        labels(&mut app),
        ["Brom: idle", "Marta: idle", "Silas: idle"]
    );
    let texts = |app: &mut App| {
        let mut texts = app.world_mut().query::<&Text>();
        texts
            .iter(app.world())
            .map(|text| text.0.clone())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        texts(&mut app).contains("Brom\nState: idle"),
        "the first actor's details"
    );
    assert!(
        texts(&mut app).contains("Model: no model server"),
        "{}",
        texts(&mut app)
    );

    press(&mut app, KeyCode::Tab);
    assert_eq!(app.world().resource::<DebugOverlay>().selected, Some(marta));
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.world().resource::<DebugOverlay>().selected, Some(silas));
    app.update();
    assert!(texts(&mut app).contains("Silas\nState: idle"));
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.world().resource::<DebugOverlay>().selected,
        Some(brom),
        "around the end"
    );

    app.world_mut().despawn(silas);
    app.update();
    app.update();
    assert_eq!(
        labels(&mut app),
        ["Brom: idle", "Marta: idle"],
        "a row goes with its actor"
    );

    press(&mut app, KeyCode::F12);
    assert!(!panel_shown(&mut app), "F12 hides it again");
}
