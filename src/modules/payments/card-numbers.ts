/**
 * Instruments are tokens: anything that looks like a card number (13 to 19 digits, spaces and
 * dashes aside, whether its Luhn check passes or not) is refused before any handler sees it, and
 * neither the refusal nor any log repeats it.
 */
import { badRequest } from '../../kernel/errors';

const CARD_NUMBER = /^\d{13,19}$/;

export const looksLikeCardNumber = (token: string) => CARD_NUMBER.test(token.replace(/[\s-]/g, ''));

/** The 400 for a card number, naming the field and never the value. */
export const cardNumberRefused = (field = 'token') =>
  badRequest('a payment token looks like a card number: send a payment handler token, never a card number', [
    { field, message: 'looks like a card number; card numbers are never accepted, stored or logged' },
  ]);
