import { AgentdError } from "../core/errors/index.ts";

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
  if (text === undefined || text === "") return 1;
  const page = Number(text);
  if (!Number.isSafeInteger(page) || page < 1)
    throw new AgentdError("invalid_query", `Cannot use "${text}" as page: expected a whole number from 1`, { param: "page" });
  return page;
}

export function pageWindow(page: number, perPage: number, total: number): PageWindow {
  return { page, pages: Math.max(1, Math.ceil(total / perPage)), limit: perPage, offset: (page - 1) * perPage, total };
}
