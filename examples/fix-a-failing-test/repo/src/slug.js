// Turns a title into the last part of a URL: "Hello, World!" becomes "hello-world".
function slugify(title) {
  return title.toLowerCase().replace(/[^a-z0-9]/g, '-');
}

module.exports = { slugify };
