//! Single-file components (Vue's `.vue`, Svelte's `.svelte`): their
//! `<script>` blocks are TypeScript or JavaScript, read by the script
//! extractor. Everything outside them is blanked to spaces, newlines kept,
//! so every symbol keeps its line and byte offset in the component.

/// True for a path the extractor reads as a single-file component.
pub(super) fn is_component(path: &str) -> bool {
    path.ends_with(".vue") || path.ends_with(".svelte")
}

/// The component's text with only its script blocks left, and whether one
/// of them is written with JSX (`lang="tsx"` or `lang="jsx"`).
pub(super) fn script_blocks(text: &str) -> (String, bool) {
    let bytes = text.as_bytes();
    let mut kept = vec![false; bytes.len()];
    let mut jsx = false;
    let mut from = 0;
    while let Some(open) = find_ignoring_case(bytes, from, b"<script") {
        let Some(tag_end) = memchr::memchr(b'>', &bytes[open..]).map(|end| open + end + 1) else {
            break;
        };
        let tag = &text[open..tag_end];
        jsx |= ["\"tsx\"", "'tsx'", "\"jsx\"", "'jsx'"]
            .iter()
            .any(|lang| tag.contains(lang));
        let close = find_ignoring_case(bytes, tag_end, b"</script").unwrap_or(bytes.len());
        kept[tag_end..close]
            .iter_mut()
            .for_each(|keep| *keep = true);
        from = close;
        if close == bytes.len() {
            break;
        }
    }
    let blanked: Vec<u8> = bytes
        .iter()
        .zip(kept)
        .map(|(&byte, keep)| match byte {
            b'\n' | b'\r' => byte,
            _ if keep => byte,
            _ => b' ',
        })
        .collect();
    // a multi-byte character is kept or blanked whole: the blocks start after
    // an ASCII `>` and end before an ASCII `<`, so the text stays UTF-8
    (String::from_utf8(blanked).unwrap_or_default(), jsx)
}

fn find_ignoring_case(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let rest = haystack.get(from..)?;
    rest.windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
        .map(|at| from + at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_script_blocks_remain_on_their_own_lines() {
        let text = "<template>\n  <p>{{ total() }}</p>\n</template>\n<script setup lang=\"ts\">\nimport { Cart } from './cart'\nconst c = new Cart()\n</script>\n<style>p { color: red }</style>\n";
        let (kept, jsx) = script_blocks(text);
        assert!(!jsx);
        assert_eq!(kept.len(), text.len());
        let lines: Vec<&str> = kept.lines().map(str::trim).collect();
        assert_eq!(
            lines,
            [
                "",
                "",
                "",
                "",
                "import { Cart } from './cart'",
                "const c = new Cart()",
                "",
                ""
            ]
        );
    }

    #[test]
    fn blocks_in_jsx_are_said_and_an_unclosed_block_runs_to_the_end() {
        let (kept, jsx) = script_blocks("<SCRIPT lang='tsx'>\nconst a = <b/>;\n");
        assert!(jsx);
        assert_eq!(kept.lines().nth(1), Some("const a = <b/>;"));
        let (kept, _) = script_blocks("<template>é</template>");
        assert_eq!(kept.trim(), "");
    }
}
