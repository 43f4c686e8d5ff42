//! The overlay drawn with `bevy_ui`: a panel on the right of the window with the
//! model's traffic, a row per smart actor, and the picked actor's details, built from
//! [`overlay_view`] each frame it is shown and never otherwise.

use bevy::input::mouse::{MouseScrollUnit, MouseWheel};
use bevy::prelude::*;

use super::view::{ActorSnapshot, OverlaySnapshot, OverlayView, PlanProgress};
use super::{
    DebugLog, DebugLogPlugin, DebugOverlaySystems, drawable, next_actor, overlay_view, record,
};
use crate::actors::{ActorMind, HistoryStore, SmartActor};
use crate::llm::{LlmBridge, LlmStats};
use crate::planning::Plan;
use crate::world::DisplayName;

/// The in-game debug overlay: what each smart actor saw, was asked, answered, and
/// why an answer was rejected; the model's traffic and each endpoint's health; the
/// content errors. Hidden until [`toggle`](Self::toggle) (F12) is pressed; while it
/// shows, Tab and Shift-Tab (or a click on its row) pick an actor, and the mouse
/// wheel or Page Up / Page Down scroll its details.
///
/// It needs a window and a camera (Bevy's `DefaultPlugins` and a `Camera2d`, or your
/// game's own), and records with [`DebugLogPlugin`], which it adds. Hidden, it costs
/// only the log's reading of messages.
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_loom::overlay::LoomDebugOverlayPlugin;
///
/// App::new().add_plugins(LoomDebugOverlayPlugin::default());
/// ```
#[derive(Debug, Clone)]
pub struct LoomDebugOverlayPlugin {
    /// The key that shows and hides the overlay.
    pub toggle: KeyCode,
    /// Whether it shows from the start.
    pub visible: bool,
}

impl Default for LoomDebugOverlayPlugin {
    fn default() -> Self {
        Self {
            toggle: KeyCode::F12,
            visible: false,
        }
    }
}

/// The overlay's state: whether it shows, and whose details.
#[derive(Resource, Debug, Clone, PartialEq, Reflect)]
#[reflect(Resource)]
pub struct DebugOverlay {
    /// Whether it shows.
    pub visible: bool,
    /// The actor whose details show; the first listed without one.
    pub selected: Option<Entity>,
    /// The key that shows and hides it.
    pub toggle: KeyCode,
}

impl Plugin for LoomDebugOverlayPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<DebugLogPlugin>() {
            app.add_plugins(DebugLogPlugin);
        }
        let shown = |overlay: Res<DebugOverlay>| overlay.visible;
        app.insert_resource(DebugOverlay {
            visible: self.visible,
            selected: None,
            toggle: self.toggle,
        })
        .register_type::<DebugOverlay>()
        // Bevy's input plugin registers it too; the overlay works without it.
        .add_message::<MouseWheel>()
        .add_systems(Startup, spawn_panel)
        .add_systems(
            Update,
            (
                keys,
                show_or_hide.run_if(resource_changed::<DebugOverlay>),
                (pick_by_click, scroll, draw).chain().run_if(shown),
            )
                .chain()
                .in_set(DebugOverlaySystems)
                .after(record),
        );
    }
}

/// The overlay's panel.
#[derive(Component)]
struct Panel;

/// Where the game's lines are written.
#[derive(Component)]
struct GlobalText;

/// Where the actors' rows go.
#[derive(Component)]
struct ActorList;

/// A row of the actor list, for this actor.
#[derive(Component)]
struct ActorRowButton(Entity);

/// The scrolling part with the picked actor's details.
#[derive(Component)]
struct Detail;

/// Where the picked actor's details are written.
#[derive(Component)]
struct DetailText;

const PANEL: Color = Color::srgba(0.04, 0.05, 0.07, 0.9);
const ROW: Color = Color::srgba(1.0, 1.0, 1.0, 0.04);
const ROW_PICKED: Color = Color::srgba(0.25, 0.45, 0.85, 0.55);
const TEXT: Color = Color::srgb(0.88, 0.9, 0.92);
const DIM: Color = Color::srgb(0.6, 0.65, 0.7);
/// Pixels a line of the wheel scrolls.
const LINE: f32 = 18.0;

/// Text of `size`, wrapped at words, and inside a word too long for the panel (a
/// model's minified JSON, a long address), which would otherwise run off the window.
fn font(size: f32) -> (TextFont, TextLayout) {
    let wrapping = TextLayout::linebreak(LineBreak::WordOrCharacter);
    (TextFont::from_font_size(size), wrapping)
}

/// Spawns the panel, hidden unless the overlay starts shown.
fn spawn_panel(mut commands: Commands, overlay: Res<DebugOverlay>) {
    let display = if overlay.visible {
        Display::Flex
    } else {
        Display::None
    };
    let key = format!("{:?}", overlay.toggle);
    commands
        .spawn((
            Panel,
            Name::new("bevy_loom debug overlay"),
            Node {
                display,
                position_type: PositionType::Absolute,
                top: px(0),
                right: px(0),
                width: percent(46),
                height: percent(100),
                flex_direction: FlexDirection::Column,
                padding: UiRect::all(px(10)),
                row_gap: px(8),
                ..default()
            },
            BackgroundColor(PANEL),
            GlobalZIndex(i32::MAX - 1),
        ))
        .with_children(|panel| {
            panel.spawn((
                Text::new(format!(
                    "bevy_loom debug: {key} hides, Tab / Shift-Tab or a click picks an actor, the wheel scrolls"
                )),
                font(13.0),
                TextColor(DIM),
            ));
            panel.spawn((GlobalText, Text::default(), font(13.0), TextColor(TEXT)));
            panel.spawn((
                ActorList,
                Node {
                    flex_direction: FlexDirection::Column,
                    row_gap: px(2),
                    max_height: percent(30),
                    overflow: Overflow::scroll_y(),
                    ..default()
                },
            ));
            panel
                .spawn((
                    Detail,
                    Node {
                        flex_grow: 1.0,
                        min_height: px(0),
                        overflow: Overflow::scroll_y(),
                        ..default()
                    },
                    ScrollPosition::default(),
                ))
                .with_child((DetailText, Text::default(), font(14.0), TextColor(TEXT)));
        });
}

/// The toggle key shows and hides the overlay; while it shows, Tab and Shift-Tab pick
/// the next and previous actor.
fn keys(
    input: Option<Res<ButtonInput<KeyCode>>>,
    mut overlay: ResMut<DebugOverlay>,
    actors: Query<(Entity, &SmartActor, Option<&DisplayName>)>,
) {
    let Some(input) = input else {
        return;
    };
    if input.just_pressed(overlay.toggle) {
        overlay.visible = !overlay.visible;
    }
    if !overlay.visible || !input.just_pressed(KeyCode::Tab) {
        return;
    }
    let back = input.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]);
    let mut listed: Vec<(&str, Entity)> = (actors.iter())
        .map(|(entity, actor, name)| (shown_name(actor, name), entity))
        .collect();
    listed.sort_unstable();
    let order: Vec<Entity> = listed.into_iter().map(|(_, entity)| entity).collect();
    let shown = (overlay.selected)
        .filter(|selected| order.contains(selected))
        .or_else(|| order.first().copied());
    overlay.selected = next_actor(&order, shown, back);
}

/// An actor's name in the overlay: its display name, or its spec's id.
fn shown_name<'a>(actor: &'a SmartActor, name: Option<&'a DisplayName>) -> &'a str {
    name.map_or(actor.spec.as_str(), |name| name.0.as_str())
}

/// Shows or hides the panel as the overlay says.
fn show_or_hide(overlay: Res<DebugOverlay>, mut panel: Query<&mut Node, With<Panel>>) {
    let display = if overlay.visible {
        Display::Flex
    } else {
        Display::None
    };
    for mut node in &mut panel {
        node.display = display;
    }
}

/// A click on an actor's row picks it.
fn pick_by_click(
    rows: Query<(&Interaction, &ActorRowButton), Changed<Interaction>>,
    mut overlay: ResMut<DebugOverlay>,
) {
    for (interaction, row) in &rows {
        if *interaction == Interaction::Pressed {
            overlay.selected = Some(row.0);
        }
    }
}

/// The wheel, Page Up and Page Down scroll the picked actor's details.
fn scroll(
    mut wheel: MessageReader<MouseWheel>,
    input: Option<Res<ButtonInput<KeyCode>>>,
    mut detail: Query<&mut ScrollPosition, With<Detail>>,
) {
    let mut by: f32 = wheel
        .read()
        .map(|wheel| match wheel.unit {
            MouseScrollUnit::Line => -wheel.y * LINE,
            MouseScrollUnit::Pixel => -wheel.y,
        })
        .sum();
    if let Some(input) = input {
        if input.just_pressed(KeyCode::PageDown) {
            by += 20.0 * LINE;
        }
        if input.just_pressed(KeyCode::PageUp) {
            by -= 20.0 * LINE;
        }
    }
    if by == 0.0 {
        return;
    }
    for mut position in &mut detail {
        // Bevy keeps the position within what overflows.
        position.y = (position.y + by).max(0.0);
    }
}

/// What the overlay reads of a smart actor.
type ActorParts = (
    Entity,
    &'static SmartActor,
    &'static ActorMind,
    Option<&'static DisplayName>,
    Option<&'static Plan>,
);

/// A row of the actor list: whom it picks, its label and its colour.
type RowParts = (
    &'static mut ActorRowButton,
    &'static mut Text,
    &'static mut BackgroundColor,
);

/// What the overlay reads from the game each frame it shows.
#[derive(bevy::ecs::system::SystemParam)]
struct Game<'w, 's> {
    actors: Query<'w, 's, ActorParts>,
    log: Res<'w, DebugLog>,
    bridge: Option<Res<'w, LlmBridge>>,
    stats: Option<Res<'w, LlmStats>>,
    history: Option<Res<'w, HistoryStore>>,
    overlay: Res<'w, DebugOverlay>,
}

/// The panel's texts and rows.
#[derive(bevy::ecs::system::SystemParam)]
struct Drawn<'w, 's> {
    global: Query<'w, 's, &'static mut Text, (With<GlobalText>, Without<DetailText>)>,
    detail: Query<'w, 's, &'static mut Text, (With<DetailText>, Without<GlobalText>)>,
    list: Query<'w, 's, (Entity, Option<&'static Children>), With<ActorList>>,
    rows: Query<'w, 's, RowParts, (Without<GlobalText>, Without<DetailText>)>,
}

/// Draws the overlay's view of the game this frame: each text is written only when it
/// changed, and rows are added or taken away as actors come and go.
fn draw(game: Game, mut drawn: Drawn, mut commands: Commands) {
    let view = view_of(&game);
    for mut text in &mut drawn.global {
        set_text(&mut text, view.global.join("\n"));
    }
    let detail = (view.detail.as_ref())
        .map(|detail| format!("{}\n{}", detail.title, detail.lines.join("\n")))
        .unwrap_or_default();
    for mut text in &mut drawn.detail {
        set_text(&mut text, detail.clone());
    }
    let Ok((list, children)) = drawn.list.single() else {
        return;
    };
    let existing = children.map_or(&[][..], |children| &children[..]);
    for (n, row) in view.rows.iter().enumerate() {
        let background = BackgroundColor(if row.selected { ROW_PICKED } else { ROW });
        let drawn_row = existing.get(n).and_then(|&e| drawn.rows.get_mut(e).ok());
        match drawn_row {
            Some((mut picks, mut text, mut color)) => {
                if picks.0 != row.entity {
                    picks.0 = row.entity;
                }
                set_text(&mut text, row.label.clone());
                color.set_if_neq(background);
            }
            None => {
                commands.entity(list).with_child((
                    ActorRowButton(row.entity),
                    Button,
                    Node {
                        padding: UiRect::axes(px(6), px(2)),
                        ..default()
                    },
                    Text::new(row.label.clone()),
                    font(13.0),
                    TextColor(TEXT),
                    background,
                ));
            }
        }
    }
    for &extra in existing.iter().skip(view.rows.len()) {
        commands.entity(extra).despawn();
    }
}

/// Writes `text` only when it differs, so an unchanged text is not laid out again.
fn set_text(text: &mut Mut<Text>, new: String) {
    let new = drawable(new);
    if text.0 != new {
        text.0 = new;
    }
}

/// The overlay's view of the game now.
fn view_of(game: &Game) -> OverlayView {
    let mut actors: Vec<ActorSnapshot<'_>> = (game.actors.iter())
        .map(|(entity, actor, mind, name, plan)| ActorSnapshot {
            entity,
            name: shown_name(actor, name),
            state: mind.state(),
            plan: plan.map(|plan| PlanProgress {
                command: plan.command().to_owned(),
                step: plan.awaiting().map(|step| step.progress),
            }),
        })
        .collect();
    actors.sort_unstable_by(|a, b| (a.name, a.entity).cmp(&(b.name, b.entity)));
    let stats = game.stats.as_deref().cloned().unwrap_or_default();
    let (backend, endpoints) = match &game.bridge {
        Some(bridge) => (bridge.backend_description(), bridge.endpoint_health()),
        None => ("no model server (no LlmPlugin)", Vec::new()),
    };
    overlay_view(&OverlaySnapshot {
        actors: &actors,
        selected: game.overlay.selected,
        backend,
        stats: &stats,
        endpoints: &endpoints,
        log: &game.log,
        history: game.history.as_deref(),
    })
}
