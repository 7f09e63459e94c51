//! The real OS keychain, through `keyring`: a secret stored by one handle is read by a new one
//! (as by a later process) and is gone after delete. On Linux CI this is the Secret Service of
//! an unlocked gnome-keyring in a private D-Bus session (`scripts/test.sh` starts it): the test
//! asserts that the platform store was chosen, not the kernel keyutils fallback, and asks the
//! Secret Service itself over D-Bus (`dbus-send`) whether it holds the item. With no keychain at
//! all the test fails and says how to provide one. The fallback has a test of its own.

use echo_secrets::{Keychain, SERVICE, SecretStore, StoreKind};

/// Round trip through `keychain` under `account`, with a second handle as a later reader.
fn round_trip(keychain: &Keychain, again: &Keychain, account: &str) {
    keychain.set(account, "sk-round-trip-1").expect("store");
    assert_eq!(
        again.get(account).expect("read").as_deref(),
        Some("sk-round-trip-1"),
        "a new handle reads what the first stored ({})",
        again.describe()
    );
    keychain.set(account, "sk-round-trip-2").expect("replace");
    assert_eq!(
        again.get(account).expect("read").as_deref(),
        Some("sk-round-trip-2")
    );
}

/// The object paths of the Secret Service's items filed under `account`, asked over D-Bus by
/// another program than the one that stored them.
#[cfg(target_os = "linux")]
fn secret_service_items(account: &str) -> Vec<String> {
    let out = std::process::Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.SearchItems",
            &format!("dict:string:string:service,{SERVICE},username,{account}"),
        ])
        .output()
        .expect("run dbus-send (Debian package dbus)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "SearchItems failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("object path "))
        .map(|p| p.trim_matches('"').to_string())
        .collect()
}

#[test]
fn the_platform_keychain_stores_reads_and_deletes_a_key() {
    let keychain = Keychain::platform();
    assert!(
        keychain.available(),
        "no keychain: {}. Run the tests through `bash scripts/test.sh`, which starts a D-Bus \
         session with an unlocked gnome-keyring (or run inside a desktop session).",
        keychain.describe()
    );
    assert_eq!(
        keychain.kind(),
        StoreKind::Platform,
        "the platform keychain is not the one in use ({}): on Linux the Secret Service did not \
         answer and the kernel keyutils fallback was taken. Run the tests through \
         `bash scripts/test.sh`, which starts gnome-keyring in a private D-Bus session.",
        keychain.describe()
    );
    let account = format!("test:echo-secrets:{}", std::process::id());
    let again = Keychain::platform();
    round_trip(&keychain, &again, &account);
    #[cfg(target_os = "linux")]
    assert_eq!(
        secret_service_items(&account).len(),
        1,
        "the Secret Service holds the one item stored"
    );
    assert!(keychain.delete(&account).expect("delete"));
    assert_eq!(again.get(&account).expect("read"), None);
    #[cfg(target_os = "linux")]
    assert_eq!(
        secret_service_items(&account),
        Vec::<String>::new(),
        "the Secret Service no longer holds the item"
    );
    assert!(!keychain.delete(&account).expect("delete again"));
}

/// The fallback where no Secret Service runs: the kernel's per-user keyring.
#[cfg(target_os = "linux")]
#[test]
fn the_kernel_keyutils_fallback_stores_reads_and_deletes_a_key() {
    let keychain = Keychain::kernel_keyutils().expect("the kernel keyutils keyring");
    assert_eq!(keychain.kind(), StoreKind::KernelKeyutils);
    let again = Keychain::kernel_keyutils().expect("the kernel keyutils keyring");
    let account = format!("test:echo-secrets:keyutils:{}", std::process::id());
    round_trip(&keychain, &again, &account);
    assert_eq!(
        secret_service_items(&account),
        Vec::<String>::new(),
        "the fallback does not write to the Secret Service"
    );
    assert!(keychain.delete(&account).expect("delete"));
    assert_eq!(again.get(&account).expect("read"), None);
    assert!(!keychain.delete(&account).expect("delete again"));
}
