import { queryInt } from "../http/queryNumber.ts";

export interface PageWindow {
  /** 1-based. */
  page: number;
  pages: number;
  limit: number;
  offset: number;
  total: number;
}

/** Reads ?page= (1-based); anything but a positive integer is a 400 with a clear message. */
export function parsePageNumber(text: string | undefined): number {
  return queryInt(text, { name: "page", min: 1, max: 1_000_000, fallback: 1 });
}

export function pageWindow(page: number, perPage: number, total: number): PageWindow {
  return { page, pages: Math.max(1, Math.ceil(total / perPage)), limit: perPage, offset: (page - 1) * perPage, total };
}
