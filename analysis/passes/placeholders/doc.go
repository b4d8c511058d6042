// Package placeholders checks {{ }} placeholders in prose with the
// engine's template parser (engine/template.Parse and Check), and the
// run-time failures that are certain from the prompt's structure
// (docs/language.md#placeholders):
//
//   - placeholder-syntax: an unclosed {{, an empty or space-padded path
//     segment (var., var..x), `var`/`sys` without a key, or a key on
//     args/reply/item ({{ item.key }}).
//   - item-outside-fanout: {{ item }} in H1 prose, or in a section that no
//     literal fanout uses as its worker (item is nil outside fanout arms).
//   - nil-reply: {{ reply }} where reply is certainly nil: H1 prose before
//     any earlier H1 prose produced a reply, or the first walked section
//     (not a jump target) before any prose or Lua assignment could set it.
//   - unknown-placeholder-root: a root that is none of args, reply, item,
//     var, sys and not a global assigned by the VM's Lua (locals are
//     invisible to placeholders), an unknown sys key, a sys key that is
//     never set where it is used (sys.model in H1 prose, sys.index outside
//     fanout workers).
package placeholders
