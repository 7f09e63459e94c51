//! Text out of documents for `read_file`: PDF (pdf-extract over lopdf), Word `.docx` and
//! OpenDocument `.odt` (the zip's XML body through quick-xml, paragraph by paragraph) and HTML
//! (html2text, as `web_fetch` uses). Limits: [`MAX_DOCUMENT_BYTES`] of input, [`MAX_PAGES`]
//! pages of a PDF. A PDF that is encrypted, or scanned (pages with no text layer), gets an
//! error saying so; the extractors run off the async threads and a panic inside one is an
//! error, never a crash.

use crate::registry::ToolError;
use quick_xml::events::Event;
use std::io::Read;
use std::path::Path;

/// Largest document read, in bytes.
pub const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;
/// Most pages of a PDF turned into text.
pub const MAX_PAGES: usize = 500;
/// Width HTML is laid out in.
const HTML_WIDTH: usize = 100;
/// Largest XML body of a .docx/.odt, unpacked.
const MAX_XML_BYTES: u64 = 64 * 1024 * 1024;

/// The kinds of documents `read_file` turns into text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// PDF.
    Pdf,
    /// Word (Office Open XML).
    Docx,
    /// OpenDocument text.
    Odt,
    /// HTML.
    Html,
}

impl Kind {
    /// The kind a file name says it is, if any.
    pub fn of(path: &Path) -> Option<Kind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "pdf" => Kind::Pdf,
            "docx" => Kind::Docx,
            "odt" => Kind::Odt,
            "html" | "htm" | "xhtml" => Kind::Html,
            _ => return None,
        })
    }
}

/// The text of a document and what was left out.
#[derive(Debug)]
pub struct Extracted {
    /// The text.
    pub text: String,
    /// Notes for the model (pages left out, pages without text).
    pub notes: Vec<String>,
}

/// Extracts the text of `bytes` (a `kind` document, shown to the model as `shown`).
pub async fn extract(kind: Kind, bytes: Vec<u8>, shown: &str) -> Result<Extracted, ToolError> {
    let shown_owned = shown.to_string();
    let work = tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(|| match kind {
            Kind::Pdf => pdf(&bytes, &shown_owned),
            Kind::Docx => office(&bytes, &shown_owned, "word/document.xml", "p", "t"),
            Kind::Odt => office(&bytes, &shown_owned, "content.xml", "p", ""),
            Kind::Html => html(&bytes, &shown_owned),
        })
    });
    match work.await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) | Err(_) => Err(ToolError::Failed(format!(
            "cannot read {shown}: the document could not be parsed (it may be damaged)"
        ))),
    }
}

fn pdf(bytes: &[u8], shown: &str) -> Result<Extracted, ToolError> {
    let fail = |why: String| ToolError::Failed(format!("cannot read {shown}: {why}"));
    let mut doc = lopdf::Document::load_mem(bytes)
        .map_err(|e| fail(format!("it is not a readable PDF ({e})")))?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(fail(
            "the PDF is encrypted with a password; read_file cannot open it".into(),
        ));
    }
    let pages = doc.get_pages().len();
    let texts = pdf_extract::extract_text_from_mem_by_pages(bytes)
        .map_err(|e| fail(format!("its text could not be extracted ({e})")))?;
    let mut notes = Vec::new();
    let mut out = String::new();
    let mut empty = 0;
    for (i, page) in texts.iter().take(MAX_PAGES).enumerate() {
        let page = page.trim();
        if page.is_empty() {
            empty += 1;
        }
        out.push_str(&format!("--- page {} of {pages} ---\n{page}\n", i + 1));
    }
    if empty == texts.len().min(MAX_PAGES) {
        return Err(fail(format!(
            "none of its {pages} page(s) has a text layer (a scanned PDF?); read_file does not do OCR"
        )));
    }
    if empty > 0 {
        notes.push(format!("{empty} page(s) have no text layer (scanned?)"));
    }
    if pages > MAX_PAGES {
        notes.push(format!(
            "only the first {MAX_PAGES} of {pages} pages are shown"
        ));
    }
    if texts.len() < pages.min(MAX_PAGES) {
        notes.push(format!(
            "text was extracted from {} of {pages} pages; the rest could not be read",
            texts.len()
        ));
    }
    Ok(Extracted { text: out, notes })
}

/// The paragraphs of an Office Open XML or OpenDocument file: the text inside `text_tag`
/// elements (every text node when empty) of `xml_path`, a line per `para_tag` element.
fn office(
    bytes: &[u8],
    shown: &str,
    xml_path: &str,
    para_tag: &str,
    text_tag: &str,
) -> Result<Extracted, ToolError> {
    let fail = |why: String| ToolError::Failed(format!("cannot read {shown}: {why}"));
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| fail(format!("it is not a valid document (zip: {e})")))?;
    let mut entry = zip.by_name(xml_path).map_err(|e| match e {
        zip::result::ZipError::UnsupportedArchive(m) if m.contains("ncrypt") => {
            fail("the document is encrypted with a password; read_file cannot open it".into())
        }
        _ => fail(format!("it has no {xml_path} ({e})")),
    })?;
    let mut xml = Vec::new();
    entry
        .by_ref()
        .take(MAX_XML_BYTES)
        .read_to_end(&mut xml)
        .map_err(|e| fail(format!("cannot unpack {xml_path} ({e})")))?;
    let mut reader = quick_xml::Reader::from_reader(xml.as_slice());
    let mut out = String::new();
    let mut in_text = text_tag.is_empty();
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) if e.local_name().as_ref() == text_tag => in_text = true,
            Ok(Event::End(e)) if e.local_name().as_ref() == text_tag => {
                in_text = text_tag.is_empty();
            }
            Ok(Event::End(e))
                if e.local_name().as_ref() == para_tag || e.local_name().as_ref() == "h" =>
            {
                out.push('\n');
            }
            Ok(Event::Empty(e)) if e.local_name().as_ref() == "tab" => out.push('\t'),
            Ok(Event::Empty(e)) if matches!(e.local_name().as_ref(), "br" | "line-break") => {
                out.push('\n');
            }
            Ok(Event::Text(t)) if in_text => out.push_str(&t.xml10_content()),
            Ok(Event::GeneralRef(r)) if in_text => match r.resolve_char_ref() {
                Ok(Some(c)) => out.push(c),
                _ => match &*r {
                    "amp" => out.push('&'),
                    "lt" => out.push('<'),
                    "gt" => out.push('>'),
                    "quot" => out.push('"'),
                    "apos" => out.push('\''),
                    _ => {}
                },
            },
            Ok(Event::Eof) => break,
            Err(e) => return Err(fail(format!("{xml_path} is not well-formed XML ({e})"))),
            Ok(_) => {}
        }
        buf.clear();
    }
    Ok(Extracted {
        text: out,
        notes: Vec::new(),
    })
}

fn html(bytes: &[u8], shown: &str) -> Result<Extracted, ToolError> {
    let text = html2text::config::plain()
        .string_from_read(bytes, HTML_WIDTH)
        .map_err(|e| {
            ToolError::Failed(format!("cannot turn the HTML of {shown} into text: {e}"))
        })?;
    Ok(Extracted {
        text,
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolContext, ToolOutcome, ToolRegistry};
    use echo_core::ToolCall;
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream, dictionary};
    use std::io::Write;
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

    /// A PDF whose pages say `pages[i]` (an empty string: a page with no text, as a scan).
    fn pdf_with(pages: &[&str]) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        });
        let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
        let mut kids = Vec::new();
        for text in pages {
            let mut ops = Vec::new();
            if !text.is_empty() {
                ops = vec![
                    Operation::new("BT", vec![]),
                    Operation::new("Tf", vec!["F1".into(), 12.into()]),
                    Operation::new("Td", vec![72.into(), 720.into()]),
                    Operation::new("Tj", vec![Object::string_literal(*text)]),
                    Operation::new("ET", vec![]),
                ];
            }
            let content = Content { operations: ops }.encode().expect("content");
            let content_id = doc.add_object(Stream::new(dictionary! {}, content));
            let page = doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            });
            kids.push(page.into());
        }
        let count = i64::try_from(kids.len()).expect("few pages");
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources,
                "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            }),
        );
        let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog);
        let mut out = Vec::new();
        doc.save_to(&mut out).expect("save");
        out
    }

    /// A zip holding `name` with `xml`.
    fn zipped(name: &str, xml: &str) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        zip.start_file(name, zip::write::SimpleFileOptions::default())
            .expect("entry");
        zip.write_all(xml.as_bytes()).expect("write");
        zip.finish().expect("finish");
        out.into_inner()
    }

    async fn read(dir: &Path, file: &str) -> ToolOutcome {
        let ctx = ToolContext {
            workdir: dir.to_path_buf(),
            cancel: CancellationToken::new(),
            session_id: "s".into(),
            turn_id: "t".into(),
            temporary: false,
            project_id: None,
        };
        let call = ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: serde_json::json!({ "path": file }).to_string(),
        };
        ToolRegistry::with_builtins()
            .execute(&call, &ctx, Duration::from_secs(30))
            .await
    }

    #[tokio::test]
    async fn read_file_returns_the_text_of_pdf_docx_odt_and_html() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("report.pdf"),
            pdf_with(&["Revenue grew twelve percent", "Costs fell"]),
        )
        .expect("pdf");
        let docx = zipped(
            "word/document.xml",
            r#"<?xml version="1.0"?><w:document xmlns:w="w"><w:body>
<w:p><w:r><w:t>Minutes of the</w:t></w:r><w:r><w:t xml:space="preserve"> board &amp; staff</w:t></w:r></w:p>
<w:p><w:r><w:t>Second paragraph</w:t></w:r></w:p></w:body></w:document>"#,
        );
        std::fs::write(dir.path().join("minutes.docx"), docx).expect("docx");
        let odt = zipped(
            "content.xml",
            r#"<?xml version="1.0"?><office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text>
<text:h>Plan</text:h><text:p>Buy <text:span>milk</text:span></text:p></office:text></office:body></office:document-content>"#,
        );
        std::fs::write(dir.path().join("plan.odt"), odt).expect("odt");
        std::fs::write(
            dir.path().join("page.html"),
            "<html><head><script>var x = 1;</script></head><body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>",
        )
        .expect("html");

        let pdf = read(dir.path(), "report.pdf").await;
        assert!(pdf.ok, "{}", pdf.content);
        assert!(
            pdf.content.contains("--- page 1 of 2 ---"),
            "{}",
            pdf.content
        );
        assert!(
            pdf.content.contains("Revenue grew twelve percent"),
            "{}",
            pdf.content
        );
        assert!(
            pdf.content.contains("--- page 2 of 2 ---\nCosts fell"),
            "{}",
            pdf.content
        );

        let docx = read(dir.path(), "minutes.docx").await;
        assert!(docx.ok, "{}", docx.content);
        assert!(
            docx.content
                .contains("Minutes of the board & staff\nSecond paragraph"),
            "{}",
            docx.content
        );
        let odt = read(dir.path(), "plan.odt").await;
        assert!(odt.ok, "{}", odt.content);
        assert!(odt.content.contains("Plan\nBuy milk"), "{}", odt.content);
        let html = read(dir.path(), "page.html").await;
        assert!(html.ok, "{}", html.content);
        assert!(
            html.content.contains("Title")
                && html.content.contains("bold")
                && html.content.contains("text."),
            "{}",
            html.content
        );
        assert!(!html.content.contains("var x"), "{}", html.content);
    }

    #[tokio::test]
    async fn scanned_broken_and_oversized_documents_get_a_clear_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("scan.pdf"), pdf_with(&["", ""])).expect("pdf");
        std::fs::write(dir.path().join("broken.pdf"), b"%PDF-1.4 this is not a pdf").expect("pdf");
        std::fs::write(dir.path().join("broken.docx"), b"PK not really").expect("docx");
        std::fs::write(
            dir.path().join("half.pdf"),
            pdf_with(&["Only the first page has text", ""]),
        )
        .expect("pdf");

        let scan = read(dir.path(), "scan.pdf").await;
        assert!(!scan.ok);
        assert!(
            scan.content.contains("no text layer") || scan.content.contains("has a text layer"),
            "{}",
            scan.content
        );
        assert!(scan.content.contains("OCR"), "{}", scan.content);
        for file in ["broken.pdf", "broken.docx"] {
            let out = read(dir.path(), file).await;
            assert!(!out.ok, "{file}: {}", out.content);
            assert!(
                out.content.contains(&format!("cannot read {file}")),
                "{}",
                out.content
            );
        }
        let half = read(dir.path(), "half.pdf").await;
        assert!(half.ok, "{}", half.content);
        assert!(
            half.content.contains("1 page(s) have no text layer"),
            "{}",
            half.content
        );
    }
}
