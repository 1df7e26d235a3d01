// Renders the menu from a small in-page list.
const items = [
  { name: "Espresso", price: 2.4 },
  { name: "Flat white", price: 3.2 },
  { name: "Cinnamon bun", price: 3.0 },
];

function formatPrice(price) {
  return price.toFixed(2) + " €";
}

function renderMenu(list) {
  const ul = document.querySelector("#menu .items");
  for (const item of list) {
    const li = document.createElement("li");
    li.textContent = item.name + " — " + formatPrice(item.price);
    ul.appendChild(li);
  }
}

function renderSpecials(list) {
  const ul = document.querySelector("#specials .items");
  for (const item of list) {
    const li = document.createElement("li");
    li.textContent = item.name + " — " + formatPrice(item.price);
    ul.appendChild(li);
  }
}

renderMenu(items);
