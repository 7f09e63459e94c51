//! The real OS keychain, through `keyring`: a secret stored by one handle is read by a new one
//! (as by a later process) and is gone after delete. On Linux CI this is the Secret Service of
//! an unlocked gnome-keyring in a private D-Bus session (`scripts/test.sh` starts it); with no
//! keychain at all the test fails and says how to provide one.

use echo_secrets::{Keychain, SecretStore};

#[test]
fn the_platform_keychain_stores_reads_and_deletes_a_key() {
    let keychain = Keychain::platform();
    assert!(
        keychain.available(),
        "no keychain: {}. Run the tests through `bash scripts/test.sh`, which starts a D-Bus \
         session with an unlocked gnome-keyring (or run inside a desktop session).",
        keychain.describe()
    );
    let account = format!("test:echo-secrets:{}", std::process::id());
    keychain.set(&account, "sk-round-trip-1").expect("store");
    let again = Keychain::platform();
    assert_eq!(
        again.get(&account).expect("read").as_deref(),
        Some("sk-round-trip-1"),
        "a new handle reads what the first stored ({})",
        again.describe()
    );
    keychain.set(&account, "sk-round-trip-2").expect("replace");
    assert_eq!(
        again.get(&account).expect("read").as_deref(),
        Some("sk-round-trip-2")
    );
    assert!(keychain.delete(&account).expect("delete"));
    assert_eq!(again.get(&account).expect("read"), None);
    assert!(!keychain.delete(&account).expect("delete again"));
}
