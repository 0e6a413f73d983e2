import type { FieldProblem } from './errors';

export interface PageBlock {
  first: string;
  next: string | null;
  after: string | null;
  previous: string | null;
  before: string | null;
}

export interface SuccessEnvelope<T> {
  data: T;
  page: PageBlock | null;
  meta: null;
}

export interface ErrorEnvelope {
  error: { code: number; message: string; details: FieldProblem[] | null };
  meta: null;
}

export const single = <T>(data: T): SuccessEnvelope<T> => ({ data, page: null, meta: null });

export const list = <T>(data: T[], page: PageBlock): SuccessEnvelope<T[]> => ({ data, page, meta: null });

export const errorBody = (code: number, message: string, details: FieldProblem[] | null = null): ErrorEnvelope => ({
  error: { code, message, details },
  meta: null,
});
