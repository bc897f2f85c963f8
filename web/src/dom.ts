/** A tiny element builder: h('div', { class: 'x', onclick }, child, 'text'). */
type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function svg(tag: string, attrs: Record<string, string | number>, ...children: (SVGElement | string)[]) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

/** The values of a form as nested JSON: `endereco.cep` → { endereco: { cep } }; empty fields are left out. */
export function formJson(form: HTMLFormElement): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const el of Array.from(form.elements)) {
    if (!(el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement))
      continue;
    if (!el.name || el.type === 'file' || el.type === 'submit') continue;
    if (el instanceof HTMLInputElement && el.type === 'checkbox') {
      if (!el.checked) continue;
      const list = ((out[el.name] as string[] | undefined) ?? []) as string[];
      list.push(el.value);
      out[el.name] = list;
      continue;
    }
    const raw = el.value.trim();
    if (raw === '') continue;
    const value: unknown =
      el.dataset.type === 'number'
        ? Number(raw.replace(',', '.'))
        : el.dataset.type === 'boolean'
          ? raw === 'true'
          : raw;
    const path = el.name.split('.');
    let node = out;
    for (const part of path.slice(0, -1)) {
      node[part] ??= {};
      node = node[part] as Record<string, unknown>;
    }
    node[path.at(-1)!] = value;
  }
  return out;
}

export function formatDate(iso: string | null | undefined, locale: string): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(locale, { dateStyle: 'short', timeStyle: 'short' });
}
