import { version, problemJson } from "ferrule";

const v: string = version();
const media: string = problemJson();
export const summary: string = `${v} ${media}`;
