//! Tauri's build step (the page is embedded into the binary, as the app's UI is).

fn main() {
    tauri_build::build();
}
