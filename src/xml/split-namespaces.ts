/**
 * Split namespaces (GISS-style ABRASF schemas: one namespace per message, the types in another). A message written
 * in one default namespace is rewritten so that:
 * - the root is in the message namespace, and so are its children (elements the message schema declares locally);
 * - below those, elements are in the types namespace (the content of the types' complex types), but for the
 *   children of `localGroups` (locally declared with an anonymous type, e.g. `Faixa`, `ListaNfse`), which stay in
 *   the message namespace;
 * - `typeRefs` (global elements of the types schema the message references, e.g. `ListaMensagemRetorno`,
 *   `CompNfse`) are in the types namespace wherever they appear in the message namespace.
 * Elements that declare their own default namespace (a signed Rps, a Signature, a composed CompNfse) are left as
 * they are, so signed parts keep their bytes. Works on the canonical text our builders write (no comments, CDATA
 * or processing instructions).
 */
export function splitNamespaces(
  xml: string,
  messageNamespace: string,
  typesNamespace: string,
  localGroups: readonly string[] = [],
  typeRefs: readonly string[] = [],
): string {
  const stack: { name: string; ns: string }[] = [];
  return xml.replace(
    /<(\/?)([A-Za-z_][\w.:-]*)([^>]*?)(\/?)>/g,
    (tag, closing: string, name: string, attrs: string, empty: string) => {
      if (closing) {
        stack.pop();
        return tag;
      }
      const parent = stack[stack.length - 1];
      const own = /\sxmlns="([^"]*)"/.exec(attrs)?.[1];
      let ns: string;
      let out = tag;
      if (!parent) {
        ns = messageNamespace;
        out = `<${name} xmlns="${messageNamespace}"${attrs.replace(/\sxmlns="[^"]*"/, '')}${empty}>`;
      } else if (own !== undefined) {
        ns = own;
      } else if (
        parent.ns === messageNamespace &&
        (typeRefs.includes(name) || (stack.length >= 2 && !localGroups.includes(parent.name)))
      ) {
        ns = typesNamespace;
        out = `<${name} xmlns="${typesNamespace}"${attrs}${empty}>`;
      } else {
        ns = parent.ns;
      }
      if (!empty) stack.push({ name, ns });
      return out;
    },
  );
}
