//! What the DOM snapshot says about each node of one document: layout
//! bounds, the identifier, whether a selector can address it, whether it is
//! drawn, and the DOM tree shape (to place elements the accessibility tree
//! leaves out).

use std::collections::HashMap;

use crate::cdp::dom::{DocumentSnapshot, DomSnapshot};

/// Bounds in CSS pixels of the document: x, y, width, height.
pub(crate) type CssRect = (f64, f64, f64, f64);

/// DOM node types used here.
const ELEMENT_NODE: i64 = 1;

/// Per-DOM-node facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DomFacts {
    /// Bounds in document CSS pixels (the union of its layout objects).
    pub(crate) bounds: Option<CssRect>,
    /// `data-testid`, else the DOM `id`.
    pub(crate) identifier: Option<String>,
    pub(crate) password: bool,
    /// An `<input>` or `<textarea>`: its accessibility children are its
    /// inner editor.
    pub(crate) text_control: bool,
    /// An element a selector can address without an accessible name or
    /// role: it has `data-testid`, `id`, `name`, `role`, `aria-label` or
    /// `tabindex`, or responds to clicks.
    pub(crate) addressable: bool,
    /// Laid out with a non-empty box and `visibility: visible`.
    pub(crate) drawn: bool,
    /// The `href` attribute, resolved against the document's URL.
    pub(crate) href: Option<String>,
}

/// The facts of one document of a snapshot.
#[derive(Debug, Clone, Default)]
pub(crate) struct DocFacts {
    pub(crate) by_backend: HashMap<i64, DomFacts>,
    /// Backend node id of each DOM node, by snapshot index.
    pub(crate) backend: Vec<i64>,
    /// Parent of each DOM node, by snapshot index.
    pub(crate) parent: Vec<Option<usize>>,
    /// Whether each DOM node is an element.
    pub(crate) element: Vec<bool>,
    /// Whether each DOM node is inside an `<svg>` (its parts are drawn
    /// but are one picture; the `<svg>` itself is the unit).
    pub(crate) in_svg: Vec<bool>,
    /// Snapshot index of each backend node id.
    pub(crate) index_of: HashMap<i64, usize>,
    /// The document's scroll offset, CSS pixels.
    pub(crate) scroll: (f64, f64),
    pub(crate) frame_id: String,
    pub(crate) url: String,
    pub(crate) title: String,
}

impl DocFacts {
    /// The facts of the node with this backend id.
    pub(crate) fn get(&self, backend: i64) -> Option<&DomFacts> {
        self.by_backend.get(&backend)
    }

    /// Whether snapshot node `node` is `ancestor` or below it.
    pub(crate) fn is_within(&self, node: usize, ancestor: usize) -> bool {
        let mut at = Some(node);
        // The chain is at most as long as the document.
        for _ in 0..=self.parent.len() {
            match at {
                Some(i) if i == ancestor => return true,
                Some(i) => at = self.parent.get(i).copied().flatten(),
                None => return false,
            }
        }
        false
    }
}

fn union(a: Option<CssRect>, b: CssRect) -> CssRect {
    match a {
        None => b,
        Some((ux, uy, uw, uh)) => {
            let (x0, y0) = (ux.min(b.0), uy.min(b.1));
            let (x1, y1) = ((ux + uw).max(b.0 + b.2), (uy + uh).max(b.1 + b.3));
            (x0, y0, x1 - x0, y1 - y0)
        }
    }
}

fn usize_of(v: i64) -> Option<usize> {
    usize::try_from(v).ok()
}

/// Facts of document `index` of `dom` (`None` when there is no such
/// document).
pub(crate) fn document(dom: &DomSnapshot, index: usize) -> Option<DocFacts> {
    let doc: &DocumentSnapshot = dom.documents.get(index)?;
    let nodes = &doc.nodes;
    let count = nodes.backend_node_id.len();
    let mut bounds: Vec<Option<CssRect>> = vec![None; count];
    let mut visible: Vec<bool> = vec![true; count];
    let mut laid_out: Vec<bool> = vec![false; count];
    for (layout_index, node_index) in doc.layout.node_index.iter().enumerate() {
        let Some(i) = usize_of(*node_index).filter(|i| *i < count) else {
            continue;
        };
        laid_out[i] = true;
        if let Some(style) = doc.layout.styles.get(layout_index)
            && let Some(v) = style.first().and_then(|s| dom.string(*s))
            && v != "visible"
        {
            visible[i] = false;
        }
        if let Some([x, y, w, h]) = doc
            .layout
            .bounds
            .get(layout_index)
            .map(Vec::as_slice)
            .and_then(|b| <&[f64; 4]>::try_from(b).ok())
        {
            bounds[i] = Some(union(bounds[i], (*x, *y, *w, *h)));
        }
    }
    let clickable: std::collections::HashSet<usize> = nodes
        .is_clickable
        .index
        .iter()
        .filter_map(|i| usize_of(*i))
        .collect();
    let parent: Vec<Option<usize>> = (0..count)
        .map(|i| {
            nodes
                .parent_index
                .get(i)
                .and_then(|p| usize_of(*p))
                .filter(|p| *p < count)
        })
        .collect();
    let name_of = |i: usize| {
        nodes
            .node_name
            .get(i)
            .and_then(|n| dom.string(*n))
            .unwrap_or_default()
    };
    let element: Vec<bool> = (0..count)
        .map(|i| nodes.node_type.get(i) == Some(&ELEMENT_NODE))
        .collect();
    let mut in_svg = vec![false; count];
    for i in 0..count {
        // Parents come before their children in a snapshot.
        in_svg[i] = parent[i]
            .is_some_and(|p| p < i && (in_svg[p] || name_of(p).eq_ignore_ascii_case("svg")));
    }
    let mut by_backend = HashMap::with_capacity(count);
    let mut index_of = HashMap::with_capacity(count);
    for (i, backend) in nodes.backend_node_id.iter().enumerate() {
        let mut testid = None;
        let mut id = None;
        let mut named = false;
        let mut password = false;
        let mut href = None;
        if let Some(attrs) = nodes.attributes.get(i) {
            for pair in attrs.chunks_exact(2) {
                let (Some(name), Some(value)) = (dom.string(pair[0]), dom.string(pair[1])) else {
                    continue;
                };
                match name {
                    "data-testid" if !value.is_empty() => testid = Some(value.to_owned()),
                    "id" if !value.is_empty() => id = Some(value.to_owned()),
                    "name" | "role" | "aria-label" | "aria-labelledby" | "tabindex"
                        if !value.is_empty() =>
                    {
                        named = true
                    }
                    "type" if value.eq_ignore_ascii_case("password") => password = true,
                    "href" => href = Some(value.to_owned()),
                    _ => {}
                }
            }
        }
        let tag = name_of(i);
        let drawn =
            laid_out[i] && visible[i] && bounds[i].is_some_and(|(_, _, w, h)| w > 0.0 && h > 0.0);
        let addressable =
            element[i] && (testid.is_some() || id.is_some() || named || clickable.contains(&i));
        by_backend.insert(
            *backend,
            DomFacts {
                bounds: bounds[i],
                identifier: testid.or(id),
                password,
                text_control: tag.eq_ignore_ascii_case("input")
                    || tag.eq_ignore_ascii_case("textarea"),
                addressable,
                drawn,
                href: href
                    .map(|h| resolve_url(dom.string(doc.document_url).unwrap_or_default(), &h)),
            },
        );
        index_of.insert(*backend, i);
    }
    Some(DocFacts {
        by_backend,
        backend: nodes.backend_node_id.clone(),
        parent,
        element,
        in_svg,
        index_of,
        scroll: (doc.scroll_offset_x, doc.scroll_offset_y),
        frame_id: dom.string(doc.frame_id).unwrap_or_default().to_owned(),
        url: dom.string(doc.document_url).unwrap_or_default().to_owned(),
        title: dom.string(doc.title).unwrap_or_default().to_owned(),
    })
}

/// `href` resolved against `base` the common ways (absolute, scheme-
/// relative, root-relative, query, fragment, path-relative); dot segments
/// are left as written.
pub(crate) fn resolve_url(base: &str, href: &str) -> String {
    let href = href.trim();
    let scheme_end = href.find(':');
    let first_delim = href.find(['/', '?', '#']);
    if let Some(c) = scheme_end
        && first_delim.is_none_or(|d| c < d)
        && c > 0
    {
        return href.to_owned();
    }
    let Some((scheme, rest)) = base.split_once("://") else {
        return href.to_owned();
    };
    if let Some(net) = href.strip_prefix("//") {
        return format!("{scheme}://{net}");
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let origin = format!("{scheme}://{}", &rest[..authority_end]);
    let without_fragment = base.split('#').next().unwrap_or(base);
    if href.starts_with('#') {
        return format!("{without_fragment}{href}");
    }
    let without_query = without_fragment
        .split('?')
        .next()
        .unwrap_or(without_fragment);
    if href.starts_with('?') {
        return format!("{without_query}{href}");
    }
    if href.starts_with('/') {
        return format!("{origin}{href}");
    }
    let path = &without_query[origin.len().min(without_query.len())..];
    let dir = match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    };
    format!("{origin}{dir}{href}")
}

/// For each document of `dom` owned by a frame element of another
/// document in the same snapshot: `(owner document, owner node index)`.
pub(crate) fn owners(dom: &DomSnapshot) -> HashMap<usize, (usize, usize)> {
    let mut out = HashMap::new();
    for (d, doc) in dom.documents.iter().enumerate() {
        let rare = &doc.nodes.content_document_index;
        for (node, child) in rare.index.iter().zip(&rare.value) {
            if let (Some(node), Some(child)) = (usize_of(*node), usize_of(*child))
                && child != d
                && child < dom.documents.len()
            {
                out.insert(child, (d, node));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::resolve_url;

    #[test]
    fn links_resolve_against_the_document() {
        let base = "http://127.0.0.1:8080/docs/page.html?x=1#top";
        assert_eq!(resolve_url(base, "https://e.org/a"), "https://e.org/a");
        assert_eq!(resolve_url(base, "mailto:a@b"), "mailto:a@b");
        assert_eq!(resolve_url(base, "//cdn.org/x"), "http://cdn.org/x");
        assert_eq!(resolve_url(base, "/root"), "http://127.0.0.1:8080/root");
        assert_eq!(
            resolve_url(base, "#sec"),
            "http://127.0.0.1:8080/docs/page.html?x=1#sec"
        );
        assert_eq!(
            resolve_url(base, "?q=2"),
            "http://127.0.0.1:8080/docs/page.html?q=2"
        );
        assert_eq!(
            resolve_url(base, "other.html"),
            "http://127.0.0.1:8080/docs/other.html"
        );
        assert_eq!(resolve_url("http://h", "a"), "http://h/a");
    }
}
