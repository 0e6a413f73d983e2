/**
 * The rank of each slot's document by id, the ranking's last tie-breaker: comparing two numbers
 * instead of two ids. Built from the index's documents when first needed and, after documents are
 * added, merged with the new ones sorted (slots are only appended and emptied, and a cleared index
 * starts a new array, as for the columns); an emptied slot keeps a rank that is never compared.
 */
import type { IndexedDocument } from './engine';

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class IdOrder {
  private documents: (IndexedDocument | undefined)[] | null = null;
  private filled = 0;
  /** The ranked slots and their ids, ascending by id. */
  private slots: number[] = [];
  private ids: string[] = [];
  private ranks = new Int32Array(0);

  /** Per slot of `documents`, its document's place among the documents ordered by id. */
  of(documents: (IndexedDocument | undefined)[]): Int32Array {
    if (documents !== this.documents) {
      this.documents = documents;
      this.filled = 0;
      this.slots = [];
      this.ids = [];
    }
    if (this.filled === documents.length) return this.ranks;
    const added: { slot: number; id: string }[] = [];
    for (let slot = this.filled; slot < documents.length; slot++) {
      const document = documents[slot];
      if (document) added.push({ slot, id: document.id });
    }
    added.sort((a, b) => byId(a.id, b.id));
    const slots: number[] = new Array(this.slots.length + added.length);
    const ids: string[] = new Array(slots.length);
    let i = 0;
    let j = 0;
    for (let at = 0; at < slots.length; at++) {
      if (j >= added.length || (i < this.slots.length && this.ids[i]! <= added[j]!.id)) {
        slots[at] = this.slots[i]!;
        ids[at] = this.ids[i++]!;
      } else {
        slots[at] = added[j]!.slot;
        ids[at] = added[j++]!.id;
      }
    }
    if (this.ranks.length < documents.length)
      this.ranks = new Int32Array(Math.max(documents.length + (documents.length >> 2), 1024));
    for (let at = 0; at < slots.length; at++) this.ranks[slots[at]!] = at;
    this.slots = slots;
    this.ids = ids;
    this.filled = documents.length;
    return this.ranks;
  }
}
