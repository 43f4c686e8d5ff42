//! The tavern drawn in 2D: each place a room with what lies in it, each character a
//! labelled token that walks to the room it is in, a speech line over whoever speaks,
//! and the transcript's last lines in a narration log.

use std::sync::{Arc, Mutex};

use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::sprite::Anchor;
use bevy::text::TextBounds;
use bevy_loom::overlay::drawable;
use bevy_loom::prelude::*;
use bevy_loom::world::{Character, InPlace, Player};

/// Draws the scene once it is spawned, and keeps it up to date.
pub struct ScenePlugin;

impl Plugin for ScenePlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(ClearColor(Color::srgb(0.07, 0.06, 0.05)))
            .add_systems(Startup, (spawn_camera, spawn_log))
            .add_systems(
                Update,
                (
                    (draw_rooms.run_if(resource_added::<PlaceOrder>), draw_tokens),
                    (walk, list_contents, speak, fade_speech, show_log),
                )
                    .chain()
                    .after(LoomSystems::Narrate),
            );
    }
}

/// The scene's places in the order it lists them: the first, the main room, is drawn
/// largest.
#[derive(Resource)]
pub struct PlaceOrder(pub Vec<Entity>);

/// The transcript's lines as the printer writes them, for the narration log.
#[derive(Resource, Clone, Default)]
pub struct Transcript {
    pub lines: Arc<Mutex<Vec<String>>>,
}

/// A place's room, and where it is drawn.
#[derive(Component)]
struct Room {
    place: Entity,
    rect: Rect,
}

/// The text listing what lies in a room.
#[derive(Component)]
struct Contents(Entity);

/// A character's token.
#[derive(Component)]
struct Token(Entity);

/// The speech line over a character's token, and when it fades.
#[derive(Component, Default)]
struct Speech {
    until: f32,
}

/// The narration log's text.
#[derive(Component)]
struct Log;

/// Where the scene is drawn: the window's left part above the narration log (the
/// debug overlay takes the right).
const SCENE: Rect = Rect {
    min: Vec2::new(-630.0, -150.0),
    max: Vec2::new(30.0, 350.0),
};
const ROOM: Color = Color::srgb(0.2, 0.15, 0.11);
const WALL: Color = Color::srgb(0.45, 0.34, 0.22);
const LABEL: Color = Color::srgb(0.95, 0.9, 0.8);
const ITEMS: Color = Color::srgb(0.7, 0.65, 0.55);
const SPEECH: Color = Color::srgb(1.0, 0.93, 0.6);
const PLAYER: Color = Color::srgb(0.35, 0.6, 0.95);
const OTHERS: [Color; 4] = [
    Color::srgb(0.9, 0.55, 0.3),
    Color::srgb(0.45, 0.8, 0.45),
    Color::srgb(0.8, 0.45, 0.75),
    Color::srgb(0.9, 0.8, 0.35),
];
/// Lines of narration shown.
const LOG_LINES: usize = 11;
/// How wide a speech line may be.
const SPEECH_WIDTH: f32 = 140.0;
/// The most characters of a speech line shown over a token.
const SPEECH_CHARS: usize = 60;
/// Seconds a speech line stays.
const SPEECH_SECONDS: f32 = 6.0;

fn spawn_camera(mut commands: Commands) {
    commands.spawn(Camera2d);
}

fn spawn_log(mut commands: Commands) {
    commands.spawn((
        Text::new("Narration (F12: debug overlay, Tab: next actor)"),
        TextFont::from_font_size(12.0),
        TextColor(ITEMS),
        Node {
            position_type: PositionType::Absolute,
            left: px(18),
            bottom: px(184),
            ..default()
        },
    ));
    // The newest lines at the bottom; the oldest are cut off at the top.
    commands
        .spawn((
            Node {
                position_type: PositionType::Absolute,
                left: px(10),
                bottom: px(10),
                width: px(660),
                height: px(170),
                padding: UiRect::all(px(8)),
                flex_direction: FlexDirection::Column,
                justify_content: JustifyContent::FlexEnd,
                overflow: Overflow::clip(),
                ..default()
            },
            BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.55)),
        ))
        .with_child((
            Log,
            Text::default(),
            TextFont::from_font_size(14.0),
            TextColor(LABEL),
        ));
}

/// Draws a room for each place once the scene is spawned: the first place across the
/// top of [`SCENE`], the others side by side below it.
fn draw_rooms(order: Res<PlaceOrder>, names: Query<&DisplayName>, mut commands: Commands) {
    let Some((main, others)) = order.0.split_first() else {
        return;
    };
    let size = SCENE.size();
    let main_height = if others.is_empty() {
        size.y
    } else {
        size.y * 0.58
    };
    let mut rooms = vec![(
        *main,
        Rect::from_corners(
            Vec2::new(SCENE.min.x, SCENE.max.y),
            Vec2::new(SCENE.max.x, SCENE.max.y - main_height),
        ),
    )];
    let width = size.x / others.len().max(1) as f32;
    for (n, &place) in others.iter().enumerate() {
        let left = SCENE.min.x + n as f32 * width;
        rooms.push((
            place,
            Rect::from_corners(
                Vec2::new(left, SCENE.max.y - main_height),
                Vec2::new(left + width, SCENE.min.y),
            ),
        ));
    }
    for (place, cell) in rooms {
        let name = names.get(place).map_or("somewhere", |name| name.0.as_str());
        let rect = Rect::from_corners(cell.min + Vec2::splat(6.0), cell.max - Vec2::splat(6.0));
        commands
            .spawn((
                Room { place, rect },
                Sprite::from_color(WALL, rect.size()),
                Transform::from_translation(rect.center().extend(0.0)),
            ))
            .with_children(|room| {
                let inner = rect.size() - Vec2::splat(6.0);
                room.spawn((
                    Sprite::from_color(ROOM, inner),
                    Transform::from_xyz(0.0, 0.0, 0.1),
                ));
                let corner = Vec2::new(-inner.x / 2.0 + 8.0, inner.y / 2.0 - 6.0);
                room.spawn((
                    Text2d::new(drawable(name.to_owned())),
                    TextFont::from_font_size(18.0),
                    TextColor(LABEL),
                    Anchor::TOP_LEFT,
                    Transform::from_translation(corner.extend(0.2)),
                ));
                room.spawn((
                    Contents(place),
                    Text2d::default(),
                    TextFont::from_font_size(13.0),
                    TextColor(ITEMS),
                    Anchor::TOP_LEFT,
                    TextBounds::new_horizontal(inner.x - 16.0),
                    Transform::from_translation((corner - Vec2::new(0.0, 26.0)).extend(0.2)),
                ));
            });
    }
}

/// Gives each new character a token: a coloured square, its name below, and room for
/// what it says above.
fn draw_tokens(
    characters: Query<(Entity, &DisplayName, Has<Player>), Added<Character>>,
    tokens: Query<(), With<Token>>,
    mut commands: Commands,
) {
    let mut added: Vec<_> = characters.iter().collect();
    added.sort_by_key(|(character, ..)| *character);
    let mut others = tokens.iter().count();
    for (character, name, player) in added {
        let color = if player {
            PLAYER
        } else {
            others += 1;
            OTHERS[(others - 1) % OTHERS.len()]
        };
        commands
            .spawn((
                Token(character),
                Sprite::from_color(color, Vec2::splat(30.0)),
                Transform::from_xyz(SCENE.center().x, SCENE.min.y, 1.0),
            ))
            .with_children(|token| {
                token.spawn((
                    Text2d::new(drawable(name.0.clone())),
                    TextFont::from_font_size(14.0),
                    TextColor(LABEL),
                    Transform::from_xyz(0.0, -26.0, 0.1),
                ));
                token.spawn((
                    Speech::default(),
                    Text2d::default(),
                    TextFont::from_font_size(13.0),
                    TextColor(SPEECH),
                    TextBounds::new_horizontal(SPEECH_WIDTH),
                    TextLayout::justify(Justify::Center),
                    Anchor::BOTTOM_CENTER,
                    Transform::from_xyz(0.0, 22.0, 0.3),
                ));
            });
    }
}

/// Walks each token towards its character's room, where the characters stand in a row.
fn walk(
    time: Res<Time>,
    rooms: Query<&Room>,
    characters: Query<&InPlace, With<Character>>,
    mut tokens: Query<(&Token, &mut Transform)>,
) {
    let rects: HashMap<Entity, Rect> = rooms.iter().map(|room| (room.place, room.rect)).collect();
    let mut by_room: HashMap<Entity, Vec<Entity>> = HashMap::new();
    for (token, _) in &tokens {
        if let Ok(InPlace(place)) = characters.get(token.0) {
            by_room.entry(*place).or_default().push(token.0);
        }
    }
    by_room.values_mut().for_each(|standing| standing.sort());
    let step = 1.0 - (-6.0 * time.delta_secs()).exp();
    for (token, mut transform) in &mut tokens {
        let Ok(InPlace(place)) = characters.get(token.0) else {
            continue;
        };
        let (Some(rect), Some(standing)) = (rects.get(place), by_room.get(place)) else {
            continue;
        };
        let slot = standing.iter().position(|&c| c == token.0).unwrap_or(0);
        // Room for a speech line on either side of the first and last.
        let first = rect.min.x + SPEECH_WIDTH / 2.0 + 4.0;
        let spacing = ((rect.width() - SPEECH_WIDTH - 8.0) / standing.len() as f32).min(150.0);
        let target = Vec2::new(first + slot as f32 * spacing, rect.min.y + 45.0);
        let now = transform.translation.truncate();
        transform.translation = now.lerp(target, step).extend(1.0);
    }
}

/// Lists what lies in each room (not the characters, who have tokens).
fn list_contents(
    things: Query<(&DisplayName, &InPlace), Without<Character>>,
    mut contents: Query<(&Contents, &mut Text2d)>,
) {
    for (Contents(place), mut text) in &mut contents {
        let mut names: Vec<&str> = (things.iter())
            .filter(|(_, InPlace(at))| at == place)
            .map(|(name, _)| name.0.as_str())
            .collect();
        names.sort_unstable();
        let listed = drawable(names.join(", "));
        if text.0 != listed {
            text.0 = listed;
        }
    }
}

/// Puts what a character says over its token.
fn speak(
    time: Res<Time>,
    mut spoke: MessageReader<ActorSpoke>,
    tokens: Query<(&Token, &Children)>,
    mut speech: Query<(&mut Speech, &mut Text2d)>,
) {
    for line in spoke.read() {
        let Some((_, children)) = tokens.iter().find(|(token, _)| token.0 == line.actor) else {
            continue;
        };
        for &child in children {
            if let Ok((mut said, mut text)) = speech.get_mut(child) {
                text.0 = drawable(format!("\"{}\"", shortened(&line.text)));
                said.until = time.elapsed_secs() + SPEECH_SECONDS;
            }
        }
    }
}

/// What fits over a token: the first [`SPEECH_CHARS`] characters of a line.
fn shortened(line: &str) -> String {
    let mut short: String = line.chars().take(SPEECH_CHARS).collect();
    if short.len() < line.len() {
        short.push_str("...");
    }
    short
}

/// Clears speech lines once their time is up.
fn fade_speech(time: Res<Time>, mut speech: Query<(&Speech, &mut Text2d)>) {
    for (said, mut text) in &mut speech {
        if !text.0.is_empty() && time.elapsed_secs() > said.until {
            text.0.clear();
        }
    }
}

/// Shows the transcript's last lines.
fn show_log(transcript: Res<Transcript>, mut log: Query<&mut Text, With<Log>>) {
    let lines = transcript.lines.lock().unwrap_or_else(|e| e.into_inner());
    let shown = drawable(lines[lines.len().saturating_sub(LOG_LINES)..].join("\n"));
    drop(lines);
    for mut text in &mut log {
        if text.0 != shown {
            text.0.clone_from(&shown);
        }
    }
}
