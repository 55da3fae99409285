// A small, safe Markdown renderer for model text: it builds DOM nodes and sets only textContent
// and a checked href, so no model text is ever parsed as HTML (a "<script>" stays those
// characters). The subset chat models write: paragraphs, headings, bullet and numbered lists,
// block quotes, fenced code, rules; inline code, **bold**, *italic*, [links](https://...).
"use strict";

const Markdown = (() => {
  const INLINE = new RegExp([
    "(`+)([^`]|[^`][\\s\\S]*?[^`])\\1(?!`)",          // 1,2: `code`
    "\\*\\*(?=\\S)([\\s\\S]*?\\S)\\*\\*",              // 3: **bold**
    "(?<![\\w])__(?=\\S)([\\s\\S]*?\\S)__(?![\\w])",      // 4: __bold__
    "\\*(?=[^\\s*])((?:[^*\\\\]|\\\\.)*?[^\\s*\\\\])\\*", // 5: *italic*
    "(?<![\\w])_(?=\\S)([^_]*?\\S)_(?![\\w])",         // 6: _italic_
    "\\[([^\\]\\n]+)\\]\\(([^)\\s]+)\\)",              // 7,8: [text](url)
  ].join("|"), "g");
  const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

  function element(tag, text) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function safeHref(href) {
    try {
      const url = new URL(href, document.baseURI);
      return SAFE_PROTOCOLS.has(url.protocol) ? url.href : null;
    } catch (_) {
      return null;
    }
  }

  // Inline spans of `text` appended to `parent` as elements and text nodes.
  function inline(parent, text) {
    let last = 0;
    for (const m of text.matchAll(INLINE)) {
      if (m.index > last) parent.append(document.createTextNode(text.slice(last, m.index)));
      last = m.index + m[0].length;
      if (m[2] !== undefined) parent.append(element("code", m[2]));
      else if (m[3] !== undefined || m[4] !== undefined) inline(parent.appendChild(element("strong")), m[3] ?? m[4]);
      else if (m[5] !== undefined || m[6] !== undefined) inline(parent.appendChild(element("em")), m[5] ?? m[6]);
      else {
        const href = safeHref(m[8]);
        if (href === null) { parent.append(document.createTextNode(m[0])); continue; }
        const link = parent.appendChild(element("a"));
        link.href = href;
        link.rel = "noopener noreferrer nofollow";
        link.target = "_blank";
        inline(link, m[7]);
      }
    }
    if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
  }

  const FENCE = /^\s{0,3}(```+|~~~+)/;
  const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  const BULLET = /^\s{0,3}[-*+•]\s+(.*)$/;
  const NUMBERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
  const QUOTE = /^\s{0,3}>\s?(.*)$/;

  function isBlockStart(line) {
    return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || BULLET.test(line) ||
      NUMBERED.test(line) || QUOTE.test(line);
  }

  // The block nodes of `source` (Markdown text, possibly cut mid-stream).
  function blocks(source) {
    const lines = source.replace(/\r\n?/g, "\n").split("\n");
    const out = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if (!line.trim()) { i += 1; continue; }
      if ((m = FENCE.exec(line))) {
        const body = [];
        for (i += 1; i < lines.length && !lines[i].trimStart().startsWith(m[1]); i += 1) body.push(lines[i]);
        i += 1;
        const pre = element("pre");
        pre.append(element("code", body.join("\n")));
        out.push(pre);
      } else if ((m = HEADING.exec(line))) {
        const heading = element(`h${Math.min(m[1].length + 2, 6)}`);
        inline(heading, m[2]);
        out.push(heading);
        i += 1;
      } else if (RULE.test(line)) {
        out.push(element("hr"));
        i += 1;
      } else if (BULLET.test(line) || NUMBERED.test(line)) {
        const numbered = !BULLET.test(line);
        const pattern = numbered ? NUMBERED : BULLET;
        const list = element(numbered ? "ol" : "ul");
        if (numbered && (m = NUMBERED.exec(line)) && m[1] !== "1") list.start = Number(m[1]);
        while (i < lines.length && (m = pattern.exec(lines[i]))) {
          const item = [numbered ? m[2] : m[1]];
          for (i += 1; i < lines.length && lines[i].trim() && !isBlockStart(lines[i]); i += 1) item.push(lines[i].trim());
          inline(list.appendChild(element("li")), item.join("\n"));
        }
        out.push(list);
      } else if (QUOTE.test(line)) {
        const quoted = [];
        for (; i < lines.length && (m = QUOTE.exec(lines[i])); i += 1) quoted.push(m[1]);
        const quote = element("blockquote");
        quote.append(...blocks(quoted.join("\n")));
        out.push(quote);
      } else {
        const para = [line];
        for (i += 1; i < lines.length && lines[i].trim() && !isBlockStart(lines[i]); i += 1) para.push(lines[i]);
        const p = element("p");
        inline(p, para.join("\n"));
        out.push(p);
      }
    }
    return out;
  }

  // Replace the children of `container` with the rendering of `source`.
  function render(container, source) {
    container.replaceChildren(...blocks(source));
  }

  return { render, blocks };
})();
