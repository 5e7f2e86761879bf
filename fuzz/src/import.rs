//! The `--data-import` file parser on any bytes: what the `import` fuzz target asserts.
//!
//! - No panic, and no allocation the file's size does not justify (a line that claims a
//!   4 GB value must not make the parser reserve 4 GB).
//! - An error is one line that names the file and a line number.
//! - A file that loads has items, each inside the one buffer; the longest key and value
//!   are what the items say; item indices wrap around; `--generate-keys` and
//!   `--no-expiry` did what they say.
//! - Written back out in memtier's format and read again, the items are the same.
//!
//! Included by path from the main suite's `tests/fuzz_properties.rs`.

use kvbench::workload::import::{ImportOptions, ImportedData, ImportedItem, render_import_file};

/// Checks the parser on one fuzz input: byte 0 picks the options (bit 0
/// `--generate-keys`, bit 1 `--no-expiry`, the rest `--key-minimum`), the rest is the file.
pub fn check(data: &[u8]) {
    let selector = data.first().copied().unwrap_or(0);
    let file = data.get(1..).unwrap_or_default();
    let options = ImportOptions {
        generate_keys: selector & 1 != 0,
        no_expiry: selector & 2 != 0,
        key_prefix: "memtier-",
        key_min: u64::from(selector >> 2),
    };
    check_file(file, &options);
}

/// Checks the parser on the text of one file, read with `options`.
pub fn check_file(file: &[u8], options: &ImportOptions) {
    let data = match ImportedData::parse("fuzz.csv", file, options) {
        Ok(data) => data,
        Err(message) => {
            assert!(message.starts_with("fuzz.csv:"), "{message}");
            assert!(!message.contains('\n'), "{message:?}");
            return;
        }
    };
    assert!(!data.is_empty());
    let items: Vec<ImportedItem> = (0..data.len()).map(|i| data.item(i)).collect();
    assert_eq!(data.item(data.len()), items[0], "indices wrap around");
    let longest_key = items.iter().map(|i| i.key.len()).max().unwrap_or(0);
    let longest_value = items.iter().map(|i| i.value.len()).max().unwrap_or(0);
    assert_eq!(data.max_key_len(), longest_key);
    assert_eq!(data.max_value_len(), longest_value);
    let stored: usize = items.iter().map(|i| i.key.len() + i.value.len()).sum();
    assert_eq!(data.total_bytes(), stored);
    assert_eq!(data.generated_keys(), options.generate_keys);
    for (i, item) in items.iter().enumerate() {
        if options.generate_keys {
            let want = format!("{}{}", options.key_prefix, options.key_min + i as u64);
            assert_eq!(item.key, want.as_bytes());
        }
        if options.no_expiry {
            assert_eq!(item.expiry_secs, 0);
        }
    }
    let _ = data.check_memcache_text_keys();

    let written = render_import_file(items.iter().copied());
    let plain = ImportOptions {
        generate_keys: false,
        no_expiry: false,
        key_prefix: "",
        key_min: 0,
    };
    let again = match ImportedData::parse("again.csv", &written, &plain) {
        Ok(again) => again,
        Err(message) => panic!("the file written from loaded items does not load: {message}"),
    };
    let again: Vec<ImportedItem> = (0..again.len()).map(|i| again.item(i)).collect();
    assert_eq!(again, items, "items written out and read back");
}
