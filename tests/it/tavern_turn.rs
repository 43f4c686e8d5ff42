//! tavern_turn
