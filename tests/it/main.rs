//! Integration tests, one module per scenario, in one binary so Bevy links once.

mod support;

mod abilities;
mod actor_specs;
mod combat;
mod content_validation;
mod conversation;
mod decisions;
mod economy_example;
mod faults;
mod hot_reload;
mod http_backend;
mod lint;
mod llama_server;
mod memory;
mod narration;
mod planning;
mod policy;
mod prompt_economy;
mod real_servers;
mod record_replay;
mod scheduling;
mod server_speed;
mod settings_reflection;
mod setup;
mod shared_prompts;
mod streaming;
mod tags;
mod tavern_example;
mod tavern_turn;
mod warm_up;
