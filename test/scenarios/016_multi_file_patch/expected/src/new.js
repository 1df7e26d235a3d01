import { twice } from "../lib/util.js";
console.log(twice(21));
